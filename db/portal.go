package db

import (
	"encoding/json"
	"fmt"

	"troco/server/domain"
)

// CreatePortalSession stores a customer portal session with the hashes of its url token and its
// customer session token.
func (tx *Tx) CreatePortalSession(s domain.Scope, ps *domain.PortalSession, urlHash string, urlExpires int64, cstHash string, cstExpires int64) error {
	data, err := marshalJSON(ps)
	if err != nil {
		return err
	}
	_, err = tx.exec(`INSERT INTO customer_portal_sessions (id, org_id, livemode, customer_id, data, url_hash, url_expires_at, cst_hash, cst_expires_at, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, ps.ID, s.OrgID, boolInt(s.Livemode), ps.Customer, data, urlHash, urlExpires, cstHash, cstExpires, tx.now())
	return translate(err, "create portal session")
}

// PortalBrowser is an open portal session as a browser holds it.
type PortalBrowser struct {
	Scope   domain.Scope
	Session *domain.PortalSession
	CSRF    string
}

func scanPortal(row scanner) (*PortalBrowser, error) {
	var pb PortalBrowser
	var live int
	var data string
	var csrf *string
	if err := row.Scan(&pb.Scope.OrgID, &live, &data, &csrf); err != nil {
		return nil, err
	}
	pb.Scope.Livemode = live == 1
	var ps domain.PortalSession
	if err := json.Unmarshal([]byte(data), &ps); err != nil {
		return nil, fmt.Errorf("db: decode portal session: %w", err)
	}
	pb.Session = &ps
	if csrf != nil {
		pb.CSRF = *csrf
	}
	return &pb, nil
}

// OpenPortalSession opens the session whose url token hashes to urlHash, once, before its url
// expires: the browser's cookie (hashed) and CSRF token are bound to it for the session's
// lifetime. A url already opened or expired is ErrNotFound.
func (tx *Tx) OpenPortalSession(urlHash string, now int64, cookieHash, csrf string, sessionExpires int64) (*PortalBrowser, error) {
	res, err := tx.exec(`UPDATE customer_portal_sessions SET opened_at = ?, cookie_hash = ?, csrf = ?, session_expires_at = ?
		WHERE url_hash = ? AND opened_at IS NULL AND url_expires_at > ?`, now, cookieHash, csrf, sessionExpires, urlHash, now)
	if err := affectedOne(res, err, "open portal session"); err != nil {
		return nil, err
	}
	pb, err := scanPortal(tx.queryRow("SELECT org_id, livemode, data, csrf FROM customer_portal_sessions WHERE url_hash = ?", urlHash))
	return pb, translate(err, "open portal session")
}

// FindPortalByCookie returns the open portal session of a browser cookie (hashed) while it lasts.
func (tx *Tx) FindPortalByCookie(cookieHash string, now int64) (*PortalBrowser, error) {
	pb, err := scanPortal(tx.queryRow("SELECT org_id, livemode, data, csrf FROM customer_portal_sessions WHERE cookie_hash = ? AND session_expires_at > ?", cookieHash, now))
	return pb, translate(err, "find portal session")
}

// FindCustomerSessionToken returns the scope and customer of a customer session token (hashed)
// while it is valid.
func (tx *Tx) FindCustomerSessionToken(cstHash string, now int64) (domain.Scope, string, error) {
	var sc domain.Scope
	var live int
	var customer string
	err := tx.queryRow("SELECT org_id, livemode, customer_id FROM customer_portal_sessions WHERE cst_hash = ? AND cst_expires_at > ?", cstHash, now).Scan(&sc.OrgID, &live, &customer)
	sc.Livemode = live == 1
	return sc, customer, translate(err, "find customer session token")
}
