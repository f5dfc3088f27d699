package db

// SigningKey is one access-token signing key (schema: signing_keys).
type SigningKey struct {
	KID           string
	PrivateSealed string // the Ed25519 seed sealed with the master key
	PublicKey     []byte
	CreatedAt     int64
	RetiredAt     *int64 // nil for the current key
}

// SigningKeys returns the current key and the keys retired at or after retiredSince, newest first.
func (tx *Tx) SigningKeys(retiredSince int64) ([]SigningKey, error) {
	rows, err := tx.query("SELECT kid, private_sealed, public_key, created_at, retired_at FROM signing_keys WHERE retired_at IS NULL OR retired_at >= ? ORDER BY seq DESC", retiredSince)
	if err != nil {
		return nil, translate(err, "list signing keys")
	}
	defer rows.Close()
	var out []SigningKey
	for rows.Next() {
		var k SigningKey
		if err := rows.Scan(&k.KID, &k.PrivateSealed, &k.PublicKey, &k.CreatedAt, &k.RetiredAt); err != nil {
			return nil, translate(err, "scan signing key")
		}
		out = append(out, k)
	}
	return out, translate(rows.Err(), "list signing keys")
}

// RotateSigningKey retires the current key (if any) and makes k the current one.
func (tx *Tx) RotateSigningKey(k SigningKey) error {
	if _, err := tx.exec("UPDATE signing_keys SET retired_at = ? WHERE retired_at IS NULL", tx.Now.Unix()); err != nil {
		return translate(err, "retire signing key")
	}
	_, err := tx.exec("INSERT INTO signing_keys (kid, private_sealed, public_key, created_at) VALUES (?, ?, ?, ?)", k.KID, k.PrivateSealed, k.PublicKey, tx.Now.Unix())
	return translate(err, "insert signing key")
}
