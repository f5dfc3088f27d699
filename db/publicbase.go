package db

import (
	"strings"

	"troco/server/domain"
)

// The URLs troco hands out for its own pages (an invoice's hosted_invoice_url and invoice_pdf, a
// charge's receipt_url) are read back with the public base URL of the process that reads them,
// not the one they were made with: a server restarted with another --base-url (or on another
// port) answers every stored object with links that reach it. Only the scheme and host change;
// the path and its signature or secret are kept as stored.

// SetPublicBase records the public base URL (https://host[:port]) the process serves; stored
// links are read back on it. Empty leaves the one in the settings (SettingPublicBaseURL).
func (d *DB) SetPublicBase(u string) {
	u = strings.TrimRight(u, "/")
	d.base.Store(&u)
}

// publicBase is the base URL stored links are read on: the process's (SetPublicBase), else the
// one serve last recorded in the settings, else "" (links are kept as stored).
func (tx *Tx) publicBase() string {
	if tx.db != nil {
		if b := tx.db.base.Load(); b != nil && *b != "" {
			return *b
		}
	}
	if !tx.baseRead {
		tx.baseRead = true
		if v, ok, err := tx.GetSetting(SettingPublicBaseURL); err == nil && ok {
			tx.base = strings.TrimRight(v, "/")
		}
	}
	return tx.base
}

// rebase is the stored link u on base: its scheme and host replaced by base's (a path alone is
// prefixed with it). u is returned unchanged when base is empty or u has no path.
func rebase(u, base string) string {
	if base == "" {
		return u
	}
	if strings.HasPrefix(u, "/") {
		return base + u
	}
	i := strings.Index(u, "://")
	if i < 0 {
		return u
	}
	j := strings.IndexByte(u[i+3:], '/')
	if j < 0 {
		return u
	}
	return base + u[i+3+j:]
}

// rebasePtr rebases *u in place (nil is left alone).
func (tx *Tx) rebasePtr(u *string) {
	if u != nil && *u != "" {
		*u = rebase(*u, tx.publicBase())
	}
}

// rebasePaymentData rebases the links of a payment's PIX or boleto: the hosted boleto and the
// PIX QR image. The PIX code itself (its location URL is inside the signed BR Code the payer
// already has) is kept.
func (tx *Tx) rebasePaymentData(d *domain.PaymentData) {
	if d == nil {
		return
	}
	if d.Pix != nil {
		tx.rebasePtr(&d.Pix.ImageURL)
	}
	if d.Boleto != nil {
		tx.rebasePtr(&d.Boleto.URL)
	}
}
