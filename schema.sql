-- troco schema. Each migration starts with a "-- migrate: N" line and runs once, in order,
-- inside one transaction; PRAGMA user_version records the last applied migration.
-- Portable SQL only (it must also run on PostgreSQL): INTEGER/BIGINT, TEXT, no AUTOINCREMENT
-- semantics relied upon beyond a monotonically increasing primary key.
-- Timestamps are INTEGER Unix seconds (UTC). Money is INTEGER centavos.

-- migrate: 1

CREATE TABLE organizations (
    seq                    INTEGER PRIMARY KEY,
    id                     TEXT    NOT NULL UNIQUE,
    name                   TEXT    NOT NULL,
    document               TEXT,
    document_type          TEXT,
    email                  TEXT,
    phone                  TEXT,
    address                TEXT,
    activation_status      TEXT    NOT NULL DEFAULT 'not_submitted',
    disabled_reason        TEXT,
    requirements_missing   TEXT    NOT NULL DEFAULT '[]',
    payout_account         TEXT,
    fee_plan               TEXT,
    timezone               TEXT    NOT NULL DEFAULT 'America/Sao_Paulo',
    max_installments       INTEGER NOT NULL DEFAULT 12,
    platform_id            TEXT    UNIQUE,
    split_rules            TEXT,
    connected_platform_id  TEXT,
    activation_attempts    INTEGER NOT NULL DEFAULT 0,
    metadata               TEXT    NOT NULL DEFAULT '{}',
    created_at             INTEGER NOT NULL,
    updated_at             INTEGER NOT NULL
);
CREATE INDEX organizations_connected ON organizations (connected_platform_id, seq);

CREATE TABLE api_keys (
    seq            INTEGER PRIMARY KEY,
    id             TEXT    NOT NULL UNIQUE,
    org_id         TEXT    NOT NULL REFERENCES organizations (id),
    name           TEXT    NOT NULL,
    scopes         TEXT    NOT NULL,
    livemode       INTEGER NOT NULL,
    token_hash     TEXT    NOT NULL UNIQUE,
    token_hint     TEXT    NOT NULL,
    created_at     INTEGER NOT NULL,
    expires_at     INTEGER,
    last_used_at   INTEGER,
    revoked_at     INTEGER,
    revoked_by     TEXT,
    revoke_reason  TEXT
);
CREATE INDEX api_keys_org ON api_keys (org_id, seq);

CREATE TABLE idempotency_keys (
    org_id           TEXT    NOT NULL,
    livemode         INTEGER NOT NULL,
    idem_key         TEXT    NOT NULL,
    fingerprint      TEXT    NOT NULL,
    response_status  INTEGER NOT NULL,
    response_body    BLOB    NOT NULL,
    created_at       INTEGER NOT NULL,
    PRIMARY KEY (org_id, livemode, idem_key)
);
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);

CREATE TABLE events (
    seq         INTEGER PRIMARY KEY,
    id          TEXT    NOT NULL UNIQUE,
    org_id      TEXT    NOT NULL,
    livemode    INTEGER NOT NULL,
    type        TEXT    NOT NULL,
    request_id  TEXT,
    data        TEXT    NOT NULL,
    created_at  INTEGER NOT NULL
);
CREATE INDEX events_scope ON events (org_id, livemode, seq);
CREATE INDEX events_scope_type ON events (org_id, livemode, type, seq);

CREATE TABLE customers (
    seq            INTEGER PRIMARY KEY,
    id             TEXT    NOT NULL UNIQUE,
    org_id         TEXT    NOT NULL,
    livemode       INTEGER NOT NULL,
    email          TEXT,
    name           TEXT,
    phone          TEXT,
    description    TEXT,
    document       TEXT,
    document_type  TEXT,
    address        TEXT,
    metadata       TEXT    NOT NULL DEFAULT '{}',
    deleted        INTEGER NOT NULL DEFAULT 0,
    created_at     INTEGER NOT NULL,
    updated_at     INTEGER NOT NULL
);
CREATE INDEX customers_scope ON customers (org_id, livemode, deleted, seq);
CREATE INDEX customers_email ON customers (org_id, livemode, email, seq);

CREATE TABLE products (
    seq                INTEGER PRIMARY KEY,
    id                 TEXT    NOT NULL UNIQUE,
    org_id             TEXT    NOT NULL,
    livemode           INTEGER NOT NULL,
    name               TEXT    NOT NULL,
    description        TEXT,
    image_url          TEXT,
    is_active          INTEGER NOT NULL DEFAULT 1,
    is_tax_applicable  INTEGER NOT NULL DEFAULT 0,
    default_price      TEXT,
    metadata           TEXT    NOT NULL DEFAULT '{}',
    deleted            INTEGER NOT NULL DEFAULT 0,
    created_at         INTEGER NOT NULL,
    updated_at         INTEGER NOT NULL
);
CREATE INDEX products_scope ON products (org_id, livemode, deleted, seq);

CREATE TABLE prices (
    seq                        INTEGER PRIMARY KEY,
    id                         TEXT    NOT NULL UNIQUE,
    org_id                     TEXT    NOT NULL,
    livemode                   INTEGER NOT NULL,
    product_id                 TEXT    NOT NULL REFERENCES products (id),
    name                       TEXT,
    currency                   TEXT    NOT NULL,
    unit_amount                INTEGER NOT NULL,
    type                       TEXT    NOT NULL,
    recurring_interval         TEXT,
    recurring_interval_count   INTEGER,
    recurring_trial_days       INTEGER,
    recurring_usage_type       TEXT,
    tax_behavior               TEXT    NOT NULL DEFAULT 'unspecified',
    is_active                  INTEGER NOT NULL DEFAULT 1,
    metadata                   TEXT    NOT NULL DEFAULT '{}',
    deleted                    INTEGER NOT NULL DEFAULT 0,
    created_at                 INTEGER NOT NULL,
    updated_at                 INTEGER NOT NULL
);
CREATE INDEX prices_scope ON prices (org_id, livemode, deleted, seq);
CREATE INDEX prices_product ON prices (product_id, deleted, seq);

CREATE TABLE settings (
    name   TEXT PRIMARY KEY,
    value  TEXT NOT NULL
);
