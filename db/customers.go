package db

import (
	"troco/server/domain"
)

const customerCols = "id, livemode, email, name, phone, description, document, document_type, address, metadata, created_at, updated_at, timezone"

func scanCustomer(s scanner) (*domain.Customer, error) {
	var c domain.Customer
	var live int
	var address *string
	var metadata string
	var created, updated int64
	if err := s.Scan(&c.ID, &live, &c.Email, &c.Name, &c.Phone, &c.Description, &c.Document, &c.DocumentType, &address, &metadata, &created, &updated, &c.Timezone); err != nil {
		return nil, err
	}
	c.Object = "customer"
	c.Livemode = live == 1
	c.Address = parseAddress(address)
	c.Metadata = parseMetadata(metadata)
	c.CreatedAt, c.UpdatedAt = domain.Unix(created), domain.Unix(updated)
	return &c, nil
}

// CreateCustomer inserts c in scope, assigning id and timestamps.
func (tx *Tx) CreateCustomer(s domain.Scope, c *domain.Customer) error {
	c.ID = domain.NewID(domain.PrefixCustomer)
	c.Object = "customer"
	c.Livemode = s.Livemode
	c.CreatedAt, c.UpdatedAt = domain.At(tx.Now), domain.At(tx.Now)
	if c.Metadata == nil {
		c.Metadata = domain.Metadata{}
	}
	_, err := tx.exec(`INSERT INTO customers (id, org_id, livemode, email, name, phone, description, document, document_type, address, metadata, created_at, updated_at, timezone)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		c.ID, s.OrgID, boolInt(s.Livemode), c.Email, c.Name, c.Phone, c.Description, c.Document, c.DocumentType, addressJSON(c.Address), metadataJSON(c.Metadata), tx.now(), tx.now(), c.Timezone)
	return translate(err, "create customer")
}

// FindCustomerByID returns a live (not deleted) customer in scope.
func (tx *Tx) FindCustomerByID(s domain.Scope, id string) (*domain.Customer, error) {
	c, err := scanCustomer(tx.queryRow("SELECT "+customerCols+" FROM customers WHERE id = ? AND org_id = ? AND livemode = ? AND deleted = 0", id, s.OrgID, boolInt(s.Livemode)))
	return c, translate(err, "find customer")
}

// UpdateCustomer writes every mutable field of c and bumps updated_at.
func (tx *Tx) UpdateCustomer(s domain.Scope, c *domain.Customer) error {
	c.UpdatedAt = domain.At(tx.Now)
	res, err := tx.exec(`UPDATE customers SET email = ?, name = ?, phone = ?, description = ?, document = ?, document_type = ?, address = ?, metadata = ?, updated_at = ?, timezone = ?
		WHERE id = ? AND org_id = ? AND livemode = ? AND deleted = 0`,
		c.Email, c.Name, c.Phone, c.Description, c.Document, c.DocumentType, addressJSON(c.Address), metadataJSON(c.Metadata), tx.now(), c.Timezone, c.ID, s.OrgID, boolInt(s.Livemode))
	return affectedOne(res, err, "update customer")
}

// DeleteCustomer marks a customer deleted; it disappears from finds and lists.
func (tx *Tx) DeleteCustomer(s domain.Scope, id string) error {
	res, err := tx.exec("UPDATE customers SET deleted = 1, updated_at = ? WHERE id = ? AND org_id = ? AND livemode = ? AND deleted = 0", tx.now(), id, s.OrgID, boolInt(s.Livemode))
	return affectedOne(res, err, "delete customer")
}

// CustomerFilter narrows ListCustomers.
type CustomerFilter struct {
	Email string
}

// ListCustomers pages the customers of a scope, newest first.
func (tx *Tx) ListCustomers(s domain.Scope, f CustomerFilter, p ListParams) ([]*domain.Customer, bool, error) {
	var w filter
	w.add("org_id = ?", s.OrgID)
	w.add("livemode = ?", boolInt(s.Livemode))
	w.add("deleted = 0")
	if f.Email != "" {
		w.add("email = ?", f.Email)
	}
	return page(tx, "customers", customerCols, w, p, func(s scanner) (*domain.Customer, error) { return scanCustomer(s) })
}
