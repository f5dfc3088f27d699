package db

import (
	"strings"

	"troco/server/domain"
)

const keyCols = "id, org_id, name, scopes, livemode, token_hash, token_hint, created_at, expires_at, last_used_at, revoked_at, revoked_by, revoke_reason"

func scanKey(s scanner) (*domain.APIKey, error) {
	var k domain.APIKey
	var scopes string
	var live int
	var created int64
	var expires, lastUsed, revoked *int64
	if err := s.Scan(&k.ID, &k.Organization, &k.Name, &scopes, &live, &k.TokenHash, &k.TokenHint, &created, &expires, &lastUsed, &revoked, &k.RevokedBy, &k.RevokeReason); err != nil {
		return nil, err
	}
	k.Object = "api_key"
	k.Scopes = splitScopes(scopes)
	k.Livemode = live == 1
	k.Environment = "test"
	if k.Livemode {
		k.Environment = "live"
	}
	k.CreatedAt, k.ExpiresAt, k.LastUsedAt, k.RevokedAt = domain.Unix(created), domain.UnixPtr(expires), domain.UnixPtr(lastUsed), domain.UnixPtr(revoked)
	return &k, nil
}

// CreateAPIKey stores k with the hash of token; the clear token is never stored.
func (tx *Tx) CreateAPIKey(k *domain.APIKey, token string) error {
	k.ID = domain.NewID(domain.PrefixAPIKey)
	k.Object = "api_key"
	k.TokenHash = domain.HashToken(token)
	k.TokenHint = domain.TokenHint(token)
	k.CreatedAt = domain.At(tx.Now)
	k.Environment = "test"
	if k.Livemode {
		k.Environment = "live"
	}
	_, err := tx.exec("INSERT INTO api_keys (id, org_id, name, scopes, livemode, token_hash, token_hint, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
		k.ID, k.Organization, k.Name, strings.Join(k.Scopes, ","), boolInt(k.Livemode), k.TokenHash, k.TokenHint, tx.now(), nullInt(timePtr(k.ExpiresAt)))
	return translate(err, "create api key")
}

// FindAPIKeyByHash returns the key whose token hashes to hash (revoked and expired included).
func (tx *Tx) FindAPIKeyByHash(hash string) (*domain.APIKey, error) {
	k, err := scanKey(tx.queryRow("SELECT "+keyCols+" FROM api_keys WHERE token_hash = ?", hash))
	return k, translate(err, "find api key")
}

// FindAPIKeyByID returns the key id.
func (tx *Tx) FindAPIKeyByID(id string) (*domain.APIKey, error) {
	k, err := scanKey(tx.queryRow("SELECT "+keyCols+" FROM api_keys WHERE id = ?", id))
	return k, translate(err, "find api key")
}

// ListAPIKeys returns every key of an organization, newest first.
func (tx *Tx) ListAPIKeys(orgID string) ([]*domain.APIKey, error) {
	rows, err := tx.query("SELECT "+keyCols+" FROM api_keys WHERE org_id = ? ORDER BY seq DESC", orgID)
	if err != nil {
		return nil, translate(err, "list api keys")
	}
	defer rows.Close()
	out := []*domain.APIKey{}
	for rows.Next() {
		k, err := scanKey(rows)
		if err != nil {
			return nil, translate(err, "scan api key")
		}
		out = append(out, k)
	}
	return out, translate(rows.Err(), "list api keys")
}

// RevokeAPIKey soft-deletes a key; it returns ErrConflict when it was already revoked.
func (tx *Tx) RevokeAPIKey(id, by, reason string) (*domain.APIKey, error) {
	k, err := tx.FindAPIKeyByID(id)
	if err != nil {
		return nil, err
	}
	if !k.RevokedAt.IsZero() {
		return k, ErrConflict
	}
	var reasonArg any
	if reason != "" {
		reasonArg = reason
	}
	if _, err := tx.exec("UPDATE api_keys SET revoked_at = ?, revoked_by = ?, revoke_reason = ? WHERE id = ? AND revoked_at IS NULL", tx.now(), by, reasonArg, id); err != nil {
		return nil, translate(err, "revoke api key")
	}
	return tx.FindAPIKeyByID(id)
}

// TouchAPIKey records a use of the key at the transaction's time.
func (tx *Tx) TouchAPIKey(id string) error {
	_, err := tx.exec("UPDATE api_keys SET last_used_at = ? WHERE id = ? AND (last_used_at IS NULL OR last_used_at < ?)", tx.now(), id, tx.now())
	return translate(err, "touch api key")
}
