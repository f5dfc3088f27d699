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

-- migrate: 2
-- Payments core (issue 3): intents, charges, refunds, payment methods, setup intents, the ledger
-- and the scheduled transitions of simulated PIX/boleto payments. Sub-objects that are never
-- queried (errors, buyer data, method details) are JSON documents.

CREATE TABLE payment_intents (
    seq                   INTEGER PRIMARY KEY,
    id                    TEXT    NOT NULL UNIQUE,
    org_id                TEXT    NOT NULL,
    livemode              INTEGER NOT NULL,
    status                TEXT    NOT NULL,
    amount                INTEGER NOT NULL,
    currency              TEXT    NOT NULL,
    customer_id           TEXT,
    description           TEXT,
    capture_method        TEXT    NOT NULL,
    interest_payer        TEXT    NOT NULL,
    payment_method_types  TEXT    NOT NULL,
    payment_method_id     TEXT,
    payment_method_type   TEXT,
    installments          INTEGER,
    client_secret         TEXT    NOT NULL,
    last_payment_error    TEXT,
    payment_data          TEXT,
    buyer                 TEXT,
    latest_charge_id      TEXT,
    amount_capturable     INTEGER NOT NULL DEFAULT 0,
    amount_received       INTEGER NOT NULL DEFAULT 0,
    canceled_at           INTEGER,
    cancellation_reason   TEXT,
    statement_descriptor  TEXT,
    metadata              TEXT    NOT NULL DEFAULT '{}',
    created_at            INTEGER NOT NULL,
    updated_at            INTEGER NOT NULL
);
CREATE INDEX payment_intents_scope ON payment_intents (org_id, livemode, seq);
CREATE INDEX payment_intents_status ON payment_intents (org_id, livemode, status, seq);
CREATE INDEX payment_intents_customer ON payment_intents (org_id, livemode, customer_id, seq);

CREATE TABLE charges (
    seq                     INTEGER PRIMARY KEY,
    id                      TEXT    NOT NULL UNIQUE,
    org_id                  TEXT    NOT NULL,
    livemode                INTEGER NOT NULL,
    payment_intent_id       TEXT    NOT NULL,
    customer_id             TEXT,
    status                  TEXT    NOT NULL,
    amount                  INTEGER NOT NULL,
    amount_captured         INTEGER NOT NULL DEFAULT 0,
    amount_refunded         INTEGER NOT NULL DEFAULT 0,
    captured                INTEGER NOT NULL DEFAULT 0,
    paid                    INTEGER NOT NULL DEFAULT 0,
    refunded                INTEGER NOT NULL DEFAULT 0,
    currency                TEXT    NOT NULL,
    description             TEXT,
    invoice_id              TEXT,
    payment_method_id       TEXT,
    billing_details         TEXT    NOT NULL,
    payment_method_details  TEXT    NOT NULL,
    payment_error           TEXT,
    metadata                TEXT    NOT NULL DEFAULT '{}',
    created_at              INTEGER NOT NULL,
    updated_at              INTEGER NOT NULL
);
CREATE INDEX charges_scope ON charges (org_id, livemode, seq);
CREATE INDEX charges_intent ON charges (org_id, livemode, payment_intent_id, seq);
CREATE INDEX charges_customer ON charges (org_id, livemode, customer_id, seq);

CREATE TABLE refunds (
    seq                INTEGER PRIMARY KEY,
    id                 TEXT    NOT NULL UNIQUE,
    org_id             TEXT    NOT NULL,
    livemode           INTEGER NOT NULL,
    charge_id          TEXT    NOT NULL,
    payment_intent_id  TEXT    NOT NULL,
    amount             INTEGER NOT NULL,
    currency           TEXT    NOT NULL,
    reason             TEXT,
    status             TEXT    NOT NULL,
    metadata           TEXT    NOT NULL DEFAULT '{}',
    created_at         INTEGER NOT NULL,
    updated_at         INTEGER NOT NULL
);
CREATE INDEX refunds_scope ON refunds (org_id, livemode, seq);
CREATE INDEX refunds_charge ON refunds (org_id, livemode, charge_id, seq);
CREATE INDEX refunds_intent ON refunds (org_id, livemode, payment_intent_id, seq);

-- A card keeps brand, last4, expiry and a keyed fingerprint, never its number or CVC;
-- sim_behavior is, in test mode only, the SPEC 7.1 behaviour key of a public test card.
CREATE TABLE payment_methods (
    seq              INTEGER PRIMARY KEY,
    id               TEXT    NOT NULL UNIQUE,
    org_id           TEXT    NOT NULL,
    livemode         INTEGER NOT NULL,
    type             TEXT    NOT NULL,
    customer_id      TEXT,
    card             TEXT,
    billing_details  TEXT    NOT NULL,
    sim_behavior     TEXT,
    metadata         TEXT    NOT NULL DEFAULT '{}',
    created_at       INTEGER NOT NULL,
    updated_at       INTEGER NOT NULL
);
CREATE INDEX payment_methods_scope ON payment_methods (org_id, livemode, seq);
CREATE INDEX payment_methods_customer ON payment_methods (org_id, livemode, customer_id, seq);

CREATE TABLE setup_intents (
    seq                   INTEGER PRIMARY KEY,
    id                    TEXT    NOT NULL UNIQUE,
    org_id                TEXT    NOT NULL,
    livemode              INTEGER NOT NULL,
    status                TEXT    NOT NULL,
    customer_id           TEXT,
    payment_method_id     TEXT,
    payment_method_types  TEXT    NOT NULL,
    usage                 TEXT    NOT NULL,
    client_secret         TEXT    NOT NULL,
    description           TEXT,
    last_setup_error      TEXT,
    cancellation_reason   TEXT,
    metadata              TEXT    NOT NULL DEFAULT '{}',
    created_at            INTEGER NOT NULL,
    updated_at            INTEGER NOT NULL
);
CREATE INDEX setup_intents_scope ON setup_intents (org_id, livemode, seq);
CREATE INDEX setup_intents_customer ON setup_intents (org_id, livemode, customer_id, seq);

-- The ledger: one row per instalment of a card sale, one per PIX/boleto payment, one negative
-- row per refund. settled_at stays null in test mode.
CREATE TABLE ledger_transactions (
    seq                  INTEGER PRIMARY KEY,
    id                   TEXT    NOT NULL UNIQUE,
    org_id               TEXT    NOT NULL,
    livemode             INTEGER NOT NULL,
    type                 TEXT    NOT NULL,
    payment_intent_id    TEXT    NOT NULL,
    charge_id            TEXT    NOT NULL,
    refund_id            TEXT,
    payment_method_type  TEXT    NOT NULL,
    amount               INTEGER NOT NULL,
    fee_amount           INTEGER NOT NULL,
    interest_amount      INTEGER NOT NULL,
    net_amount           INTEGER NOT NULL,
    currency             TEXT    NOT NULL,
    status               TEXT    NOT NULL,
    installment          INTEGER,
    installment_count    INTEGER,
    settled_at           INTEGER,
    created_at           INTEGER NOT NULL,
    updated_at           INTEGER NOT NULL
);
CREATE INDEX ledger_transactions_scope ON ledger_transactions (org_id, livemode, seq);
CREATE INDEX ledger_transactions_intent ON ledger_transactions (org_id, livemode, payment_intent_id, seq);
CREATE INDEX ledger_transactions_charge ON ledger_transactions (org_id, livemode, charge_id, seq);

-- Delayed transitions of simulated PIX/boleto payments (SPEC 8.5): a job claims due rows and
-- deletes them in the transaction that applies them, so a restart loses none and two replicas
-- never apply one twice.
CREATE TABLE scheduled_transitions (
    seq                INTEGER PRIMARY KEY,
    org_id             TEXT    NOT NULL,
    livemode           INTEGER NOT NULL,
    payment_intent_id  TEXT    NOT NULL,
    charge_id          TEXT    NOT NULL,
    action             TEXT    NOT NULL,
    due_at             INTEGER NOT NULL,
    created_at         INTEGER NOT NULL
);
CREATE INDEX scheduled_transitions_due ON scheduled_transitions (due_at);
CREATE INDEX scheduled_transitions_intent ON scheduled_transitions (payment_intent_id);

-- migrate: 4
-- Organizations and activation (issue 6). An organization is one record in both environments;
-- its activation state is kept per environment: the existing columns are live, the test_ ones
-- the sandbox's (a sandbox approval never activates live payments). activation_profile is the
-- data the seller entered in the hosted form (representative, bank account), kept for prefill.

ALTER TABLE organizations ADD COLUMN test_activation_status TEXT NOT NULL DEFAULT 'not_submitted';
ALTER TABLE organizations ADD COLUMN test_disabled_reason TEXT;
ALTER TABLE organizations ADD COLUMN test_requirements_missing TEXT NOT NULL DEFAULT '[]';
ALTER TABLE organizations ADD COLUMN test_payout_account TEXT;
ALTER TABLE organizations ADD COLUMN test_activation_attempts INTEGER NOT NULL DEFAULT 0;
ALTER TABLE organizations ADD COLUMN activation_profile TEXT NOT NULL DEFAULT '{}';
UPDATE organizations SET test_activation_status = activation_status, test_disabled_reason = disabled_reason,
    test_requirements_missing = requirements_missing, test_activation_attempts = activation_attempts;
CREATE INDEX organizations_document ON organizations (document);

-- Activation sessions (as_, created by a platform) and onboarding sessions (os_, created by the
-- organization itself) share one table and one hosted flow. owner_org_id is the scope that sees
-- the session (the platform's organization, or the organization itself). open_slot is
-- "<org_id>|<livemode>" while the session is created or in_progress and NULL once submitted, so
-- the UNIQUE index keeps one open session per organization and environment. The single-use
-- authorization code and the browser session token are stored as SHA-256 hashes.
CREATE TABLE activation_sessions (
    seq                 INTEGER PRIMARY KEY,
    id                  TEXT    NOT NULL UNIQUE,
    object              TEXT    NOT NULL,
    org_id              TEXT    NOT NULL,
    platform_id         TEXT,
    owner_org_id        TEXT    NOT NULL,
    livemode            INTEGER NOT NULL,
    status              TEXT    NOT NULL,
    open_slot           TEXT    UNIQUE,
    return_url          TEXT    NOT NULL,
    metadata            TEXT    NOT NULL DEFAULT '{}',
    code_hash           TEXT    UNIQUE,
    code_expires_at     INTEGER,
    browser_hash        TEXT    UNIQUE,
    browser_expires_at  INTEGER,
    draft               TEXT    NOT NULL DEFAULT '{}',
    opened_at           INTEGER,
    submitted_at        INTEGER,
    created_at          INTEGER NOT NULL,
    updated_at          INTEGER NOT NULL
);
CREATE INDEX activation_sessions_scope ON activation_sessions (owner_org_id, livemode, object, seq);
CREATE INDEX activation_sessions_org ON activation_sessions (org_id, livemode, seq);

-- Simulated sandbox reviews: one row per submitted test-mode session, applied by a job at due_at
-- inside a write transaction and deleted by it (safe on several replicas, survives restarts).
CREATE TABLE activation_reviews (
    seq         INTEGER PRIMARY KEY,
    session_id  TEXT    NOT NULL UNIQUE,
    org_id      TEXT    NOT NULL,
    livemode    INTEGER NOT NULL,
    due_at      INTEGER NOT NULL,
    created_at  INTEGER NOT NULL
);
CREATE INDEX activation_reviews_due ON activation_reviews (due_at);

-- Bank accounts that receive an organization's payouts (pa_). The live API manages them; a
-- sandbox approval records a simulated one (livemode 0).
CREATE TABLE payout_accounts (
    seq              INTEGER PRIMARY KEY,
    id               TEXT    NOT NULL UNIQUE,
    org_id           TEXT    NOT NULL,
    livemode         INTEGER NOT NULL,
    status           TEXT    NOT NULL,
    bank_code        TEXT    NOT NULL,
    branch           TEXT    NOT NULL,
    account_number   TEXT    NOT NULL,
    account_type     TEXT    NOT NULL,
    holder_name      TEXT    NOT NULL,
    holder_document  TEXT    NOT NULL,
    metadata         TEXT    NOT NULL DEFAULT '{}',
    disconnected_at  INTEGER,
    created_at       INTEGER NOT NULL,
    updated_at       INTEGER NOT NULL
);
CREATE INDEX payout_accounts_scope ON payout_accounts (org_id, livemode, seq);

-- Identity documents uploaded in the hosted activation form (PDF, PNG or JPEG, size-capped).
CREATE TABLE activation_documents (
    seq          INTEGER PRIMARY KEY,
    id           TEXT    NOT NULL UNIQUE,
    org_id       TEXT    NOT NULL,
    livemode     INTEGER NOT NULL,
    session_id   TEXT    NOT NULL,
    filename     TEXT    NOT NULL,
    mime_type    TEXT    NOT NULL,
    size         INTEGER NOT NULL,
    sha256       TEXT    NOT NULL,
    content      BLOB    NOT NULL,
    created_at   INTEGER NOT NULL
);
CREATE INDEX activation_documents_org ON activation_documents (org_id, livemode, seq);

-- migrate: 5
-- Checkout sessions, payment links, subscriptions (issue 5). A session keeps its public object as
-- a JSON document (the frozen snapshot of line items, payment_method_types, options) plus the
-- columns that lists, filters and jobs query.

CREATE TABLE checkout_sessions (
    seq                INTEGER PRIMARY KEY,
    id                 TEXT    NOT NULL UNIQUE,
    org_id             TEXT    NOT NULL,
    livemode           INTEGER NOT NULL,
    status             TEXT    NOT NULL,
    payment_status     TEXT    NOT NULL,
    customer_id        TEXT,
    payment_intent_id  TEXT,
    payment_link_id    TEXT,
    attempt_token      TEXT,
    data               TEXT    NOT NULL,
    expires_at         INTEGER NOT NULL,
    created_at         INTEGER NOT NULL,
    updated_at         INTEGER NOT NULL
);
CREATE INDEX checkout_sessions_scope ON checkout_sessions (org_id, livemode, seq);
CREATE INDEX checkout_sessions_expiry ON checkout_sessions (status, expires_at);
CREATE INDEX checkout_sessions_intent ON checkout_sessions (payment_intent_id);
CREATE INDEX checkout_sessions_customer ON checkout_sessions (org_id, livemode, customer_id, seq);

CREATE TABLE payment_links (
    seq         INTEGER PRIMARY KEY,
    id          TEXT    NOT NULL UNIQUE,
    org_id      TEXT    NOT NULL,
    livemode    INTEGER NOT NULL,
    active      INTEGER NOT NULL DEFAULT 1,
    deleted     INTEGER NOT NULL DEFAULT 0,
    data        TEXT    NOT NULL,
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL
);
CREATE INDEX payment_links_scope ON payment_links (org_id, livemode, deleted, seq);

CREATE TABLE subscriptions (
    seq                   INTEGER PRIMARY KEY,
    id                    TEXT    NOT NULL UNIQUE,
    org_id                TEXT    NOT NULL,
    livemode              INTEGER NOT NULL,
    customer_id           TEXT    NOT NULL,
    status                TEXT    NOT NULL,
    current_period_start  INTEGER NOT NULL,
    current_period_end    INTEGER NOT NULL,
    data                  TEXT    NOT NULL,
    created_at            INTEGER NOT NULL,
    updated_at            INTEGER NOT NULL
);
CREATE INDEX subscriptions_scope ON subscriptions (org_id, livemode, seq);
CREATE INDEX subscriptions_renewal ON subscriptions (status, current_period_end);

-- The hosted checkout's organization defaults (display name, colours, logo, template); a session's
-- branding override is merged over them by the hosted page.
CREATE TABLE organization_branding (
    org_id      TEXT    PRIMARY KEY,
    data        TEXT    NOT NULL,
    updated_at  INTEGER NOT NULL
);

-- migrate: 6
-- Webhooks (issue 4). webhook_outbox holds one row per (event, endpoint) to deliver, written in
-- the same transaction as the event; the dispatcher leases due rows (locked_until, lease) and
-- records each try in webhook_deliveries. Secrets are sealed by the keyring, never stored in clear.

CREATE TABLE webhook_endpoints (
    seq                         INTEGER PRIMARY KEY,
    id                          TEXT    NOT NULL UNIQUE,
    org_id                      TEXT    NOT NULL,
    livemode                    INTEGER NOT NULL,
    url                         TEXT    NOT NULL,
    description                 TEXT,
    enabled_events              TEXT    NOT NULL,
    metadata                    TEXT    NOT NULL DEFAULT '{}',
    status                      TEXT    NOT NULL DEFAULT 'enabled',
    disabled_reason             TEXT,
    failing                     INTEGER NOT NULL DEFAULT 0,
    failing_since               INTEGER,
    secret_sealed               TEXT    NOT NULL,
    previous_secret_sealed      TEXT,
    previous_secret_expires_at  INTEGER,
    deleted                     INTEGER NOT NULL DEFAULT 0,
    created_at                  INTEGER NOT NULL,
    updated_at                  INTEGER NOT NULL
);
CREATE INDEX webhook_endpoints_scope ON webhook_endpoints (org_id, livemode, deleted, seq);
CREATE INDEX webhook_endpoints_active ON webhook_endpoints (org_id, livemode, status, deleted);

CREATE TABLE webhook_outbox (
    seq              INTEGER PRIMARY KEY,
    event_id         TEXT    NOT NULL,
    endpoint_id      TEXT    NOT NULL,
    org_id           TEXT    NOT NULL,
    livemode         INTEGER NOT NULL,
    event_type       TEXT    NOT NULL,
    attempts         INTEGER NOT NULL DEFAULT 0,
    next_attempt_at  INTEGER NOT NULL,
    locked_until     INTEGER NOT NULL DEFAULT 0,
    lease            INTEGER NOT NULL DEFAULT 0,
    window_start     INTEGER,
    created_at       INTEGER NOT NULL,
    updated_at       INTEGER NOT NULL
);
-- The outbox holds undelivered work only (a row is deleted once delivered, failed for good or
-- canceled; webhook_deliveries keeps the history), so one index serves the dispatcher.
CREATE INDEX webhook_outbox_due ON webhook_outbox (endpoint_id, next_attempt_at, locked_until);

CREATE TABLE webhook_deliveries (
    seq              INTEGER PRIMARY KEY,
    id               TEXT    NOT NULL UNIQUE,
    org_id           TEXT    NOT NULL,
    livemode         INTEGER NOT NULL,
    endpoint_id      TEXT    NOT NULL,
    event_id         TEXT    NOT NULL,
    event_type       TEXT    NOT NULL,
    attempt          INTEGER NOT NULL,
    status           TEXT    NOT NULL,
    http_status      INTEGER,
    duration_ms      INTEGER NOT NULL,
    error            TEXT,
    next_attempt_at  INTEGER,
    url              TEXT    NOT NULL,
    created_at       INTEGER NOT NULL
);
CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id, seq);
CREATE INDEX webhook_deliveries_event ON webhook_deliveries (endpoint_id, event_id, seq);

-- migrate: 7
-- Invoices (SPEC 2.9, 4.6). An invoice keeps its public object (lines included) as a JSON
-- document plus the columns that scopes, filters, the payment hooks and the overdue job query.
-- due_at is the due instant (Unix seconds, UTC; NULL for charge_automatically); overdue_at is
-- set once the overdue job has handled the invoice, so it acts once per invoice.

CREATE TABLE invoices (
    seq                  INTEGER PRIMARY KEY,
    id                   TEXT    NOT NULL UNIQUE,
    org_id               TEXT    NOT NULL,
    livemode             INTEGER NOT NULL,
    customer_id          TEXT    NOT NULL,
    status               TEXT    NOT NULL,
    collection_method    TEXT    NOT NULL,
    subscription_id      TEXT,
    payment_intent_id    TEXT,
    checkout_session_id  TEXT,
    number               TEXT,
    due_at               INTEGER,
    overdue_at           INTEGER,
    data                 TEXT    NOT NULL,
    created_at           INTEGER NOT NULL,
    updated_at           INTEGER NOT NULL
);
CREATE INDEX invoices_scope ON invoices (org_id, livemode, seq);
CREATE INDEX invoices_customer ON invoices (org_id, livemode, customer_id, seq);
CREATE INDEX invoices_subscription ON invoices (org_id, livemode, subscription_id, seq);
CREATE INDEX invoices_intent ON invoices (org_id, livemode, payment_intent_id);
CREATE INDEX invoices_due ON invoices (status, collection_method, overdue_at, due_at);
CREATE UNIQUE INDEX invoices_number ON invoices (org_id, livemode, number);

-- migrate: 8
-- Coupons and promotion codes. A promotion code's text is unique among the active codes of an
-- organization and environment, compared without case (code_key is its upper-case form).
-- checkout_discounts names the coupon (and promotion code) a checkout session applies;
-- times_redeemed is counted from it and the sessions' payment_status, never stored.

CREATE TABLE coupons (
    seq                 INTEGER PRIMARY KEY,
    id                  TEXT    NOT NULL UNIQUE,
    org_id              TEXT    NOT NULL,
    livemode            INTEGER NOT NULL,
    name                TEXT,
    percent_off         INTEGER,
    amount_off          INTEGER,
    currency            TEXT,
    duration            TEXT    NOT NULL,
    duration_in_months  INTEGER,
    max_redemptions     INTEGER,
    redeem_by           INTEGER,
    metadata            TEXT    NOT NULL DEFAULT '{}',
    deleted             INTEGER NOT NULL DEFAULT 0,
    created_at          INTEGER NOT NULL,
    updated_at          INTEGER NOT NULL
);
CREATE INDEX coupons_scope ON coupons (org_id, livemode, deleted, seq);

CREATE TABLE promotion_codes (
    seq              INTEGER PRIMARY KEY,
    id               TEXT    NOT NULL UNIQUE,
    org_id           TEXT    NOT NULL,
    livemode         INTEGER NOT NULL,
    code             TEXT    NOT NULL,
    code_key         TEXT    NOT NULL,
    coupon_id        TEXT    NOT NULL,
    active           INTEGER NOT NULL,
    max_redemptions  INTEGER,
    expires_at       INTEGER,
    metadata         TEXT    NOT NULL DEFAULT '{}',
    created_at       INTEGER NOT NULL,
    updated_at       INTEGER NOT NULL
);
CREATE INDEX promotion_codes_scope ON promotion_codes (org_id, livemode, seq);
CREATE INDEX promotion_codes_coupon ON promotion_codes (org_id, livemode, coupon_id, seq);
CREATE UNIQUE INDEX promotion_codes_active_code ON promotion_codes (org_id, livemode, code_key) WHERE active = 1;

CREATE TABLE checkout_discounts (
    session_id         TEXT    PRIMARY KEY,
    org_id             TEXT    NOT NULL,
    livemode           INTEGER NOT NULL,
    coupon_id          TEXT    NOT NULL,
    promotion_code_id  TEXT,
    created_at         INTEGER NOT NULL
);
CREATE INDEX checkout_discounts_coupon ON checkout_discounts (coupon_id);
CREATE INDEX checkout_discounts_promotion_code ON checkout_discounts (promotion_code_id);

-- migrate: 100
-- The name buyers see on hosted pages, the PIX code and the boleto (null: the organization's name).
ALTER TABLE organizations ADD COLUMN display_name TEXT;

-- migrate: 110
-- Live-mode processor calls (Cielo, API Pix). A call is reserved in one transaction (state
-- reserved, with the idempotent reference the processor knows it by), made outside any
-- transaction, and its answer recorded (done) then applied to the charge (applied). A PIX charge
-- the PSP opened waits (waiting) until its webhook or the reconciliation job sees it paid or
-- expired. next_check_at is when the reconciliation job looks at the row next (also its claim).
CREATE TABLE processor_calls (
    seq                INTEGER PRIMARY KEY,
    id                 TEXT    NOT NULL UNIQUE,
    org_id             TEXT    NOT NULL,
    livemode           INTEGER NOT NULL,
    kind               TEXT    NOT NULL,
    method             TEXT    NOT NULL,
    payment_intent_id  TEXT    NOT NULL,
    charge_id          TEXT    NOT NULL,
    refund_id          TEXT,
    reference          TEXT    NOT NULL UNIQUE,
    amount             INTEGER NOT NULL,
    params             TEXT    NOT NULL DEFAULT '{}',
    state              TEXT    NOT NULL,
    result             TEXT,
    processor_id       TEXT,
    attempts           INTEGER NOT NULL DEFAULT 0,
    next_check_at      INTEGER NOT NULL,
    created_at         INTEGER NOT NULL,
    updated_at         INTEGER NOT NULL
);
CREATE INDEX processor_calls_due ON processor_calls (state, next_check_at);
CREATE INDEX processor_calls_intent ON processor_calls (org_id, livemode, payment_intent_id, state);
CREATE INDEX processor_calls_charge ON processor_calls (org_id, livemode, charge_id, kind);

-- migrate: 111
-- A live saved card's processor token (Cielo CardToken), sealed with the master key.
CREATE TABLE processor_card_tokens (
    payment_method_id  TEXT    PRIMARY KEY,
    org_id             TEXT    NOT NULL,
    livemode           INTEGER NOT NULL,
    sealed_token       TEXT    NOT NULL,
    created_at         INTEGER NOT NULL
);

-- migrate: 120
-- Recurring billing. next_at is the next instant the billing job has something to do for a
-- subscription (trial_will_end notice, invoice.upcoming, renewal, dunning retry, expiry of an
-- incomplete subscription, automatic resume); NULL when nothing is scheduled. billing keeps what
-- is not public (proration lines waiting for the next invoice). An invoice of a renewal carries
-- its period start in billing_period: one invoice per (subscription, period), whatever crashes or
-- replicas do. subscription_notices makes each notice (trial_will_end, invoice.upcoming) happen
-- once per trial or period.

ALTER TABLE subscriptions ADD COLUMN next_at INTEGER;
ALTER TABLE subscriptions ADD COLUMN billing TEXT NOT NULL DEFAULT '{}';
CREATE INDEX subscriptions_next ON subscriptions (next_at);

ALTER TABLE invoices ADD COLUMN billing_period INTEGER;
CREATE UNIQUE INDEX invoices_billing_period ON invoices (subscription_id, billing_period) WHERE billing_period IS NOT NULL;

-- A customer's IANA time zone: hosted invoice pages and e-mails render in it.
ALTER TABLE customers ADD COLUMN timezone TEXT;

CREATE TABLE subscription_notices (
    subscription_id  TEXT    NOT NULL,
    kind             TEXT    NOT NULL,
    at               INTEGER NOT NULL,
    PRIMARY KEY (subscription_id, kind, at)
);

-- migrate: 121
-- Customer portal sessions. The url's token, the browser cookie and the customer session token
-- are stored only as SHA-256 hashes. The url opens once within 5 minutes (opened_at), then the
-- cookie session lasts 1 hour; customer_session_token (troco_cst_…) is valid 1 hour from creation.

CREATE TABLE customer_portal_sessions (
    seq                 INTEGER PRIMARY KEY,
    id                  TEXT    NOT NULL UNIQUE,
    org_id              TEXT    NOT NULL,
    livemode            INTEGER NOT NULL,
    customer_id         TEXT    NOT NULL,
    data                TEXT    NOT NULL,
    url_hash            TEXT    NOT NULL UNIQUE,
    url_expires_at      INTEGER NOT NULL,
    opened_at           INTEGER,
    cookie_hash         TEXT    UNIQUE,
    csrf                TEXT,
    session_expires_at  INTEGER,
    cst_hash            TEXT    NOT NULL UNIQUE,
    cst_expires_at      INTEGER NOT NULL,
    created_at          INTEGER NOT NULL
);

-- The last invoice number of each organization and environment: finalizing an invoice takes
-- the next one without counting every invoice (a count grew with the number of invoices).
CREATE TABLE invoice_counters (
    org_id    TEXT    NOT NULL,
    livemode  INTEGER NOT NULL,
    n         INTEGER NOT NULL,
    PRIMARY KEY (org_id, livemode)
);

-- migrate: 130
-- Files (issue 13). The bytes live on disk in the files directory under the file's id (never a
-- name a request chooses); the row is written after the bytes are durable, and a sweep at start
-- removes bytes without a row and rows without bytes. activation_session_id links an identity
-- document to the hosted activation session it was uploaded in.
CREATE TABLE files (
    seq                    INTEGER PRIMARY KEY,
    id                     TEXT    NOT NULL UNIQUE,
    org_id                 TEXT    NOT NULL,
    livemode               INTEGER NOT NULL,
    purpose                TEXT    NOT NULL,
    filename               TEXT    NOT NULL,
    mime_type              TEXT    NOT NULL,
    size                   INTEGER NOT NULL,
    sha256                 TEXT    NOT NULL,
    metadata               TEXT    NOT NULL DEFAULT '{}',
    activation_session_id  TEXT,
    created_at             INTEGER NOT NULL,
    updated_at             INTEGER NOT NULL
);
CREATE INDEX files_scope ON files (org_id, livemode, seq);
CREATE INDEX files_purpose ON files (org_id, livemode, purpose, seq);

-- migrate: 131
-- Disputes (issue 13). The public object is kept as a JSON document plus the columns lists,
-- filters and the dispute job query; dispute_schedule holds the sandbox's pending steps (open a
-- dispute a minute after a dispute test card's charge, decide a submitted one after --sim-delay,
-- the due date), claimed by the job inside a write transaction.
ALTER TABLE charges ADD COLUMN disputed INTEGER NOT NULL DEFAULT 0;

CREATE TABLE disputes (
    seq                INTEGER PRIMARY KEY,
    id                 TEXT    NOT NULL UNIQUE,
    org_id             TEXT    NOT NULL,
    livemode           INTEGER NOT NULL,
    charge_id          TEXT    NOT NULL,
    payment_intent_id  TEXT    NOT NULL,
    status             TEXT    NOT NULL,
    doc                TEXT    NOT NULL,
    created_at         INTEGER NOT NULL,
    updated_at         INTEGER NOT NULL
);
CREATE INDEX disputes_scope ON disputes (org_id, livemode, seq);
CREATE INDEX disputes_charge ON disputes (org_id, livemode, charge_id, seq);
CREATE INDEX disputes_intent ON disputes (org_id, livemode, payment_intent_id, seq);

CREATE TABLE dispute_schedule (
    seq         INTEGER PRIMARY KEY,
    org_id      TEXT    NOT NULL,
    livemode    INTEGER NOT NULL,
    action      TEXT    NOT NULL,
    charge_id   TEXT    NOT NULL,
    dispute_id  TEXT,
    reason      TEXT,
    due_at      INTEGER NOT NULL,
    created_at  INTEGER NOT NULL
);
CREATE INDEX dispute_schedule_due ON dispute_schedule (due_at);
CREATE INDEX dispute_schedule_dispute ON dispute_schedule (dispute_id);

-- migrate: 140
-- The keys troco signs /api/v1 access tokens with (EdDSA). private_sealed is the Ed25519 seed
-- sealed with the master key of the data dir; a retired key stays published in the JWKS until
-- the tokens it signed have expired.
CREATE TABLE signing_keys (
    seq             INTEGER PRIMARY KEY,
    kid             TEXT    NOT NULL UNIQUE,
    private_sealed  TEXT    NOT NULL,
    public_key      BLOB    NOT NULL,
    created_at      INTEGER NOT NULL,
    retired_at      INTEGER
);

-- migrate: 141
-- /api/v1 metrics sum an organization's ledger over a time range.
CREATE INDEX ledger_transactions_created ON ledger_transactions (org_id, livemode, created_at);
-- migrate: 160
-- The dashboard: people with a role in one organization, one-time sign-in links, browser
-- sessions (only hashes of their tokens are stored), the owners' audit trail and the request log
-- of /v1 and /api/v1 (bodies redacted, kept 7 days).
CREATE TABLE users (
    seq             INTEGER PRIMARY KEY,
    id              TEXT    NOT NULL UNIQUE,
    org_id          TEXT    NOT NULL,
    email           TEXT    NOT NULL,
    role            TEXT    NOT NULL,
    password_hash   TEXT,
    totp_secret     TEXT,
    totp_enabled    INTEGER NOT NULL DEFAULT 0,
    failed_signins  INTEGER NOT NULL DEFAULT 0,
    locked_until    INTEGER,
    language        TEXT    NOT NULL DEFAULT 'pt-BR',
    created_at      INTEGER NOT NULL
);
CREATE UNIQUE INDEX users_org_email ON users (org_id, email);
CREATE INDEX users_email ON users (email);

CREATE TABLE signin_links (
    token_hash  TEXT    PRIMARY KEY,
    user_id     TEXT    NOT NULL,
    expires_at  INTEGER NOT NULL,
    used_at     INTEGER
);
CREATE INDEX signin_links_user ON signin_links (user_id);

CREATE TABLE dashboard_sessions (
    token_hash    TEXT    PRIMARY KEY,
    user_id       TEXT    NOT NULL,
    org_id        TEXT    NOT NULL,
    pending_totp  INTEGER NOT NULL DEFAULT 0,
    created_at    INTEGER NOT NULL,
    last_seen_at  INTEGER NOT NULL
);
CREATE INDEX dashboard_sessions_user ON dashboard_sessions (user_id);

CREATE TABLE audit_log (
    seq         INTEGER PRIMARY KEY,
    id          TEXT    NOT NULL UNIQUE,
    org_id      TEXT    NOT NULL,
    user_id     TEXT    NOT NULL,
    user_email  TEXT    NOT NULL,
    action      TEXT    NOT NULL,
    object_id   TEXT    NOT NULL,
    detail      TEXT    NOT NULL DEFAULT '',
    created_at  INTEGER NOT NULL
);
CREATE INDEX audit_log_org ON audit_log (org_id, seq);

CREATE TABLE request_logs (
    seq            INTEGER PRIMARY KEY,
    id             TEXT    NOT NULL UNIQUE,
    org_id         TEXT    NOT NULL,
    livemode       INTEGER NOT NULL,
    method         TEXT    NOT NULL,
    path           TEXT    NOT NULL,
    status         INTEGER NOT NULL,
    key_id         TEXT    NOT NULL,
    duration_us    INTEGER NOT NULL,
    object_id      TEXT    NOT NULL DEFAULT '',
    request_body   TEXT    NOT NULL DEFAULT '',
    response_body  TEXT    NOT NULL DEFAULT '',
    created_at     INTEGER NOT NULL
);
CREATE INDEX request_logs_scope ON request_logs (org_id, livemode, seq);
CREATE INDEX request_logs_object ON request_logs (org_id, livemode, object_id, seq);
CREATE INDEX request_logs_created ON request_logs (created_at);
-- Today's volume per method on the dashboard's home reads only today's rows, from the index alone.
CREATE INDEX payment_intents_created ON payment_intents (org_id, livemode, created_at, status, payment_method_type, amount_received);
-- An object's page lists its events.
CREATE INDEX events_object ON events (org_id, livemode, json_extract(data, '$.object.id'), seq);
-- migrate: 170
-- The date a ledger entry's money is expected (YYYY-MM-DD on the business-day calendar).
ALTER TABLE ledger_transactions ADD COLUMN available_on TEXT NOT NULL DEFAULT '';

-- migrate: 171
-- The location of each dynamic PIX code (its own charge's, or the one printed on a boleto): the
-- public URL a payer's bank fetches (…/pix/v2/{txid}) finds its charge here.
CREATE TABLE pix_locations (
    txid               TEXT    PRIMARY KEY,
    org_id             TEXT    NOT NULL,
    livemode           INTEGER NOT NULL,
    payment_intent_id  TEXT    NOT NULL,
    charge_id          TEXT    NOT NULL,
    kind               TEXT    NOT NULL,
    revision           INTEGER NOT NULL DEFAULT 0,
    created_at         INTEGER NOT NULL,
    updated_at         INTEGER NOT NULL,
    expires_at         INTEGER NOT NULL
);

-- migrate: 172
-- Webhook chaos (test endpoints): the settings, the endpoint's event counter that seeds the
-- decisions, each outbox row's number and first-attempt delay, and what chaos did to an attempt.
ALTER TABLE webhook_endpoints ADD COLUMN chaos TEXT;
ALTER TABLE webhook_endpoints ADD COLUMN chaos_counter INTEGER NOT NULL DEFAULT 0;
ALTER TABLE webhook_outbox ADD COLUMN chaos_sequence INTEGER NOT NULL DEFAULT 0;
ALTER TABLE webhook_outbox ADD COLUMN chaos_delay INTEGER NOT NULL DEFAULT 0;
ALTER TABLE webhook_deliveries ADD COLUMN chaos TEXT;

-- migrate: 173
-- Pix Automático authorizations (pixauth_): the public object as JSON plus the columns scopes,
-- filters, the hosted page's secret and the expiry job query.
CREATE TABLE pix_authorizations (
    seq           INTEGER PRIMARY KEY,
    id            TEXT    NOT NULL UNIQUE,
    org_id        TEXT    NOT NULL,
    livemode      INTEGER NOT NULL,
    customer_id   TEXT    NOT NULL,
    status        TEXT    NOT NULL,
    secret        TEXT    NOT NULL,
    sandbox_rule  TEXT    NOT NULL DEFAULT '',
    expires_at    INTEGER NOT NULL,
    data          TEXT    NOT NULL,
    created_at    INTEGER NOT NULL,
    updated_at    INTEGER NOT NULL
);
CREATE INDEX pix_authorizations_scope ON pix_authorizations (org_id, livemode, seq);
CREATE INDEX pix_authorizations_pending ON pix_authorizations (status, expires_at);

-- migrate: 174
-- Pix Automático charges by reference (e.g. the invoice a renewal pays): at most one successful
-- charge per authorization and reference, however often the caller retries.
CREATE TABLE pix_auto_charges (
    authorization_id   TEXT    NOT NULL,
    reference          TEXT    NOT NULL,
    org_id             TEXT    NOT NULL,
    livemode           INTEGER NOT NULL,
    payment_intent_id  TEXT    NOT NULL,
    created_at         INTEGER NOT NULL,
    PRIMARY KEY (authorization_id, reference)
);

-- migrate: 200
-- E-mail to customers (issue 20). email_outbox holds one row per message an event causes, written
-- in the same transaction as the event (db.Tx.InsertEvent); the mailer leases due rows
-- (locked_until, lease), renders them once (subject/text/html stay fixed across retries), and
-- either stores them in the test-mode sandbox mailbox or sends them by SMTP (live). status:
-- pending, sent, skipped (skip_reason says why), failed (retries exhausted).
CREATE TABLE email_outbox (
    seq              INTEGER PRIMARY KEY,
    id               TEXT    NOT NULL UNIQUE,
    org_id           TEXT    NOT NULL,
    livemode         INTEGER NOT NULL,
    kind             TEXT    NOT NULL,
    event_id         TEXT    NOT NULL,
    related_object   TEXT    NOT NULL,
    status           TEXT    NOT NULL DEFAULT 'pending',
    skip_reason      TEXT,
    to_addr          TEXT,
    subject          TEXT,
    locale           TEXT,
    text_body        TEXT,
    html_body        TEXT,
    attempts         INTEGER NOT NULL DEFAULT 0,
    next_attempt_at  INTEGER NOT NULL,
    locked_until     INTEGER NOT NULL DEFAULT 0,
    lease            INTEGER NOT NULL DEFAULT 0,
    last_error       TEXT,
    sent_at          INTEGER,
    created_at       INTEGER NOT NULL,
    updated_at       INTEGER NOT NULL
);
CREATE INDEX email_outbox_due ON email_outbox (status, next_attempt_at);
CREATE INDEX email_outbox_scope ON email_outbox (org_id, livemode, status, seq);
CREATE UNIQUE INDEX email_outbox_event_kind ON email_outbox (event_id, kind);

CREATE TABLE organization_email_settings (
    org_id  TEXT PRIMARY KEY,
    data    TEXT NOT NULL
);

ALTER TABLE customers ADD COLUMN preferred_locales TEXT NOT NULL DEFAULT '[]';

-- A charge's receipt_url: the hosted receipt page, signed so only its holder opens it.
ALTER TABLE charges ADD COLUMN receipt_url TEXT;


-- migrate: 300
-- The setup intent that saves the card of a free (trial) subscription-mode checkout session: a
-- live save runs in two phases, and the confirmation run that applies the processor's answer
-- finds the same setup intent (and its customer) by the session.
ALTER TABLE setup_intents ADD COLUMN checkout_session_id TEXT;
CREATE INDEX setup_intents_checkout ON setup_intents (org_id, livemode, checkout_session_id) WHERE checkout_session_id IS NOT NULL;

-- migrate: 310
-- Monthly recurring revenue (/api/v1 metrics): each subscription's recurring amount normalized to
-- one month (domain.Subscription.MonthlyAmount: per item unit_amount × quantity ÷ interval_count,
-- × 365/12 a day, × 52/12 a week, ÷ 12 a year; rounded half up per item), written with every
-- subscription write. MRR is one index-only SUM over (org, mode, status).
ALTER TABLE subscriptions ADD COLUMN mrr INTEGER NOT NULL DEFAULT 0;
UPDATE subscriptions SET mrr = COALESCE((
    SELECT SUM(((CAST(json_extract(it.value, '$.price.unit_amount') AS INTEGER) * CAST(json_extract(it.value, '$.quantity') AS INTEGER)
                 * (CASE json_extract(it.value, '$.price.recurring.interval') WHEN 'day' THEN 365 WHEN 'week' THEN 52 ELSE 1 END) * 2)
                + (CASE json_extract(it.value, '$.price.recurring.interval') WHEN 'day' THEN 12 WHEN 'week' THEN 12 WHEN 'year' THEN 12 ELSE 1 END)
                  * MAX(COALESCE(json_extract(it.value, '$.price.recurring.interval_count'), 1), 1))
               / (2 * (CASE json_extract(it.value, '$.price.recurring.interval') WHEN 'day' THEN 12 WHEN 'week' THEN 12 WHEN 'year' THEN 12 ELSE 1 END)
                  * MAX(COALESCE(json_extract(it.value, '$.price.recurring.interval_count'), 1), 1)))
    FROM json_each(subscriptions.data, '$.items') AS it
    WHERE json_extract(it.value, '$.price.recurring.interval') IN ('day', 'week', 'month', 'year')), 0);
CREATE INDEX subscriptions_mrr ON subscriptions (org_id, livemode, status, mrr);

-- migrate: 320

-- The in-flight slot of an Idempotency-Key on PostgreSQL, where several replicas serve one
-- database: the request holding the slot (owner) runs; a duplicate on any replica answers 409
-- until it is released. expires_at bounds the slot of a replica that died mid-request.
CREATE TABLE idempotency_inflight (
    org_id      TEXT    NOT NULL,
    livemode    INTEGER NOT NULL,
    idem_key    TEXT    NOT NULL,
    owner       TEXT    NOT NULL,
    expires_at  INTEGER NOT NULL,
    PRIMARY KEY (org_id, livemode, idem_key)
);

-- migrate: 330
-- The other organizations' accounts (user ids, space separated) that the password which
-- started a dashboard session also opened: the organization switcher offers them.
ALTER TABLE dashboard_sessions ADD COLUMN also_users TEXT NOT NULL DEFAULT '';

-- migrate: 331
-- Failed dashboard sign-ins counted per client address (every replica shares the count):
-- a window of 15 minutes, the address refused until blocked_until once it has too many.
CREATE TABLE signin_ip_failures (
    ip             TEXT    PRIMARY KEY,
    failures       INTEGER NOT NULL,
    window_start   INTEGER NOT NULL,
    blocked_until  INTEGER NOT NULL DEFAULT 0
);

-- migrate: 332
-- The dashboard's page of one API key lists the requests made with it.
CREATE INDEX request_logs_key ON request_logs (org_id, livemode, key_id, seq);

-- migrate: 340
-- Live Pix Automático: a recurrence's call is found by the PSP's idRec (its webhook, its
-- charges).
CREATE INDEX processor_calls_processor_id ON processor_calls (processor_id, kind);

-- migrate: 350
-- Event payloads are stored packed (S2 with a preset dictionary, see db/pack.go), so the
-- index of an object's events reads the object's id from its own column rather than from the JSON.
ALTER TABLE events ADD COLUMN object_id TEXT NOT NULL DEFAULT '';
UPDATE events SET object_id = COALESCE(json_extract(data, '$.object.id'), '') WHERE json_valid(data);
DROP INDEX events_object;
CREATE INDEX events_object ON events (org_id, livemode, object_id, seq);

-- migrate: 375
-- The last authenticator time step accepted for a person: a code is accepted once (RFC 6238
-- 5.2), so a code seen over someone's shoulder or phished cannot open a second session.
ALTER TABLE users ADD COLUMN totp_last_step INTEGER NOT NULL DEFAULT 0;

-- migrate: 400
-- Storage per payment: most payments have no customer, and an index entry per payment without
-- one served no query (every query on these indexes asks for one customer), so the customer
-- indexes only hold rows that have a customer.
DROP INDEX payment_intents_customer;
CREATE INDEX payment_intents_customer ON payment_intents (org_id, livemode, customer_id, seq) WHERE customer_id IS NOT NULL;
DROP INDEX charges_customer;
CREATE INDEX charges_customer ON charges (org_id, livemode, customer_id, seq) WHERE customer_id IS NOT NULL;
DROP INDEX payment_methods_customer;
CREATE INDEX payment_methods_customer ON payment_methods (org_id, livemode, customer_id, seq) WHERE customer_id IS NOT NULL;

-- migrate: 401
-- Storage per payment: an index that finds the rows of one object (an id unique across
-- organizations) needs no organization in front of it, which saves about 30 bytes an entry;
-- queries still check the organization on the row. livemode stays second, so these indexes
-- keep two equality terms and the planner prefers them to the (org_id, livemode, seq) ones
-- (TestObjectIndexesChosen).
DROP INDEX events_object;
CREATE INDEX events_object ON events (object_id, livemode, seq);
DROP INDEX request_logs_object;
CREATE INDEX request_logs_object ON request_logs (object_id, livemode, seq);
DROP INDEX request_logs_key;
CREATE INDEX request_logs_key ON request_logs (key_id, livemode, seq);
DROP INDEX charges_intent;
CREATE INDEX charges_intent ON charges (payment_intent_id, livemode, seq);
DROP INDEX ledger_transactions_intent;
CREATE INDEX ledger_transactions_intent ON ledger_transactions (payment_intent_id, livemode, seq);
DROP INDEX ledger_transactions_charge;
CREATE INDEX ledger_transactions_charge ON ledger_transactions (charge_id, livemode, seq);

-- migrate: 420
-- Storage per payment, and fewer B-tree inserts in the single writer (docs/PERFORMANCE.md,
-- "Bytes stored per payment"):
-- - request log retention walks the log in seq order (the primary key) and stops at the first
--   entry still inside the retention period, so it needs no index on created_at;
-- - the dashboard's volume per method only ever sums succeeded intents: its covering index holds
--   only those (no entry at create, one insert when an intent succeeds instead of a move per
--   status change);
-- - a charge's ledger entries are found through its payment intent's index (a charge has one
--   intent, an intent a handful of entries);
-- - the mailer only looks for pending messages;
-- - an event queues at most one message, in the transaction that inserts it (troco trigger reads
--   them from that transaction), so no index on event_id is needed.
DROP INDEX request_logs_created;
DROP INDEX payment_intents_created;
CREATE INDEX payment_intents_succeeded ON payment_intents (org_id, livemode, created_at, payment_method_type, amount_received) WHERE status = 'succeeded';
DROP INDEX ledger_transactions_charge;
DROP INDEX email_outbox_due;
CREATE INDEX email_outbox_due ON email_outbox (next_attempt_at) WHERE status = 'pending';
DROP INDEX email_outbox_event_kind;

-- migrate: 421
-- An unfiltered list of payment intents reads the status index once per status (a payment
-- intent's status is always one of eight, db.piStatuses), so the (org_id, livemode, seq) index
-- is not needed: one index entry less per payment intent, and none to write at create.
DROP INDEX payment_intents_scope;

-- migrate: 480
-- A coupon's times_redeemed also counts the subscriptions that redeemed it themselves
-- (POST /v1/subscriptions or an update with coupon), so its max_redemptions holds for them:
-- coupon_id is that coupon, written with every subscription write (null when the subscription's
-- coupon is its checkout session's discount, counted as the session's redemption). The partial
-- index serves the count of db.couponCols. Before this migration only API subscriptions had a
-- coupon.
ALTER TABLE subscriptions ADD COLUMN coupon_id TEXT;
UPDATE subscriptions SET coupon_id = json_extract(data, '$.coupon') WHERE json_extract(data, '$.checkout_session') IS NULL;
CREATE INDEX subscriptions_coupon ON subscriptions (coupon_id) WHERE coupon_id IS NOT NULL;
