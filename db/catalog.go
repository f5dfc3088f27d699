package db

import (
	"database/sql"

	"troco/server/domain"
)

const productCols = "id, livemode, name, description, image_url, is_active, is_tax_applicable, default_price, metadata, created_at, updated_at"

func scanProduct(s scanner) (*domain.Product, error) {
	var p domain.Product
	var live, active, tax int
	var metadata string
	var created, updated int64
	if err := s.Scan(&p.ID, &live, &p.Name, &p.Description, &p.ImageURL, &active, &tax, &p.DefaultPrice, &metadata, &created, &updated); err != nil {
		return nil, err
	}
	p.Object = "product"
	p.Livemode, p.IsActive, p.IsTaxApplicable = live == 1, active == 1, tax == 1
	p.Metadata = parseMetadata(metadata)
	p.CreatedAt, p.UpdatedAt = domain.Unix(created), domain.Unix(updated)
	p.Prices = []domain.Price{}
	return &p, nil
}

// CreateProduct inserts p in scope.
func (tx *Tx) CreateProduct(s domain.Scope, p *domain.Product) error {
	p.ID = domain.NewID(domain.PrefixProduct)
	p.Object = "product"
	p.Livemode = s.Livemode
	p.CreatedAt, p.UpdatedAt = domain.At(tx.Now), domain.At(tx.Now)
	if p.Metadata == nil {
		p.Metadata = domain.Metadata{}
	}
	if p.Prices == nil {
		p.Prices = []domain.Price{}
	}
	_, err := tx.exec(`INSERT INTO products (id, org_id, livemode, name, description, image_url, is_active, is_tax_applicable, default_price, metadata, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		p.ID, s.OrgID, boolInt(s.Livemode), p.Name, p.Description, p.ImageURL, boolInt(p.IsActive), boolInt(p.IsTaxApplicable), p.DefaultPrice, metadataJSON(p.Metadata), tx.now(), tx.now())
	return translate(err, "create product")
}

// FindProductByID returns a product in scope with its prices embedded.
func (tx *Tx) FindProductByID(s domain.Scope, id string) (*domain.Product, error) {
	p, err := scanProduct(tx.queryRow("SELECT "+productCols+" FROM products WHERE id = ? AND org_id = ? AND livemode = ? AND deleted = 0", id, s.OrgID, boolInt(s.Livemode)))
	if err != nil {
		return nil, translate(err, "find product")
	}
	if err := tx.embedPrices(s, []*domain.Product{p}); err != nil {
		return nil, err
	}
	return p, nil
}

// UpdateProduct writes every mutable field of p.
func (tx *Tx) UpdateProduct(s domain.Scope, p *domain.Product) error {
	p.UpdatedAt = domain.At(tx.Now)
	res, err := tx.exec(`UPDATE products SET name = ?, description = ?, image_url = ?, is_active = ?, is_tax_applicable = ?, default_price = ?, metadata = ?, updated_at = ?
		WHERE id = ? AND org_id = ? AND livemode = ? AND deleted = 0`,
		p.Name, p.Description, p.ImageURL, boolInt(p.IsActive), boolInt(p.IsTaxApplicable), p.DefaultPrice, metadataJSON(p.Metadata), tx.now(), p.ID, s.OrgID, boolInt(s.Livemode))
	return affectedOne(res, err, "update product")
}

// DeleteProduct marks a product deleted.
func (tx *Tx) DeleteProduct(s domain.Scope, id string) error {
	res, err := tx.exec("UPDATE products SET deleted = 1, updated_at = ? WHERE id = ? AND org_id = ? AND livemode = ? AND deleted = 0", tx.now(), id, s.OrgID, boolInt(s.Livemode))
	return affectedOne(res, err, "delete product")
}

// ProductFilter narrows ListProducts.
type ProductFilter struct {
	IsActive *bool
}

// ListProducts pages products of a scope, newest first, each with its prices.
func (tx *Tx) ListProducts(s domain.Scope, f ProductFilter, p ListParams) ([]*domain.Product, bool, error) {
	var w filter
	w.add("org_id = ?", s.OrgID)
	w.add("livemode = ?", boolInt(s.Livemode))
	w.add("deleted = 0")
	if f.IsActive != nil {
		w.add("is_active = ?", boolInt(*f.IsActive))
	}
	out, more, err := page(tx, "products", productCols, w, p, func(s scanner) (*domain.Product, error) { return scanProduct(s) })
	if err != nil {
		return nil, false, err
	}
	return out, more, tx.embedPrices(s, out)
}

// embedPrices fills Prices of each product with one query.
func (tx *Tx) embedPrices(s domain.Scope, products []*domain.Product) error {
	if len(products) == 0 {
		return nil
	}
	byID := map[string]*domain.Product{}
	args := []any{s.OrgID, boolInt(s.Livemode)}
	marks := ""
	for i, p := range products {
		byID[p.ID] = p
		if i > 0 {
			marks += ", "
		}
		marks += "?"
		args = append(args, p.ID)
	}
	rows, err := tx.query("SELECT "+priceCols+" FROM prices WHERE org_id = ? AND livemode = ? AND deleted = 0 AND product_id IN ("+marks+") ORDER BY seq", args...)
	if err != nil {
		return translate(err, "embed prices")
	}
	defer rows.Close()
	for rows.Next() {
		pr, err := scanPrice(rows)
		if err != nil {
			return translate(err, "scan price")
		}
		byID[pr.Product].Prices = append(byID[pr.Product].Prices, *pr)
	}
	return translate(rows.Err(), "embed prices")
}

const priceCols = `id, livemode, product_id, name, currency, unit_amount, type, recurring_interval, recurring_interval_count,
recurring_trial_days, recurring_usage_type, tax_behavior, is_active, metadata, created_at, updated_at`

func scanPrice(s scanner) (*domain.Price, error) {
	var p domain.Price
	var live, active int
	var interval, usage *string
	var count, trial *int
	var metadata string
	var created, updated int64
	if err := s.Scan(&p.ID, &live, &p.Product, &p.Name, &p.Currency, &p.UnitAmount, &p.Type, &interval, &count, &trial, &usage, &p.TaxBehavior, &active, &metadata, &created, &updated); err != nil {
		return nil, err
	}
	p.Object = "price"
	p.Livemode, p.IsActive = live == 1, active == 1
	if interval != nil {
		p.Recurring = &domain.Recurring{Interval: *interval, IntervalCount: deref(count), TrialPeriodDays: trial, UsageType: derefS(usage)}
	}
	p.Metadata = parseMetadata(metadata)
	p.CreatedAt, p.UpdatedAt = domain.Unix(created), domain.Unix(updated)
	return &p, nil
}

func deref(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}

func derefS(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// CreatePrice inserts p in scope; its product must exist in the same scope.
func (tx *Tx) CreatePrice(s domain.Scope, p *domain.Price) error {
	p.ID = domain.NewID(domain.PrefixPrice)
	p.Object = "price"
	p.Livemode = s.Livemode
	p.CreatedAt, p.UpdatedAt = domain.At(tx.Now), domain.At(tx.Now)
	if p.Metadata == nil {
		p.Metadata = domain.Metadata{}
	}
	var interval, usage any
	var count, trial any
	if r := p.Recurring; r != nil {
		interval, count, usage = r.Interval, r.IntervalCount, r.UsageType
		if r.TrialPeriodDays != nil {
			trial = *r.TrialPeriodDays
		}
	}
	_, err := tx.exec(`INSERT INTO prices (id, org_id, livemode, product_id, name, currency, unit_amount, type, recurring_interval, recurring_interval_count,
		recurring_trial_days, recurring_usage_type, tax_behavior, is_active, metadata, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		p.ID, s.OrgID, boolInt(s.Livemode), p.Product, p.Name, p.Currency, p.UnitAmount, p.Type, interval, count, trial, usage, p.TaxBehavior, boolInt(p.IsActive), metadataJSON(p.Metadata), tx.now(), tx.now())
	return translate(err, "create price")
}

// FindPriceByID returns a price in scope.
func (tx *Tx) FindPriceByID(s domain.Scope, id string) (*domain.Price, error) {
	p, err := scanPrice(tx.queryRow("SELECT "+priceCols+" FROM prices WHERE id = ? AND org_id = ? AND livemode = ? AND deleted = 0", id, s.OrgID, boolInt(s.Livemode)))
	return p, translate(err, "find price")
}

// UpdatePrice writes the mutable fields of p (name, is_active, tax_behavior, metadata).
func (tx *Tx) UpdatePrice(s domain.Scope, p *domain.Price) error {
	p.UpdatedAt = domain.At(tx.Now)
	res, err := tx.exec("UPDATE prices SET name = ?, is_active = ?, tax_behavior = ?, metadata = ?, updated_at = ? WHERE id = ? AND org_id = ? AND livemode = ? AND deleted = 0",
		p.Name, boolInt(p.IsActive), p.TaxBehavior, metadataJSON(p.Metadata), tx.now(), p.ID, s.OrgID, boolInt(s.Livemode))
	return affectedOne(res, err, "update price")
}

// DeletePrice marks a price deleted and clears it as its product's default price.
func (tx *Tx) DeletePrice(s domain.Scope, id string) error {
	res, err := tx.exec("UPDATE prices SET deleted = 1, updated_at = ? WHERE id = ? AND org_id = ? AND livemode = ? AND deleted = 0", tx.now(), id, s.OrgID, boolInt(s.Livemode))
	if err := affectedOne(res, err, "delete price"); err != nil {
		return err
	}
	_, err = tx.exec("UPDATE products SET default_price = NULL, updated_at = ? WHERE default_price = ? AND org_id = ? AND livemode = ?", tx.now(), id, s.OrgID, boolInt(s.Livemode))
	return translate(err, "clear default price")
}

// CountActivePrices returns how many undeleted prices a product has.
func (tx *Tx) CountActivePrices(s domain.Scope, productID string) (int, error) {
	var n int
	err := tx.queryRow("SELECT COUNT(*) FROM prices WHERE product_id = ? AND org_id = ? AND livemode = ? AND deleted = 0", productID, s.OrgID, boolInt(s.Livemode)).Scan(&n)
	return n, translate(err, "count prices")
}

// PriceFilter narrows ListPrices.
type PriceFilter struct {
	Product  string
	IsActive *bool
	Type     string
}

// ListPrices pages prices of a scope, newest first.
func (tx *Tx) ListPrices(s domain.Scope, f PriceFilter, p ListParams) ([]*domain.Price, bool, error) {
	var w filter
	w.add("org_id = ?", s.OrgID)
	w.add("livemode = ?", boolInt(s.Livemode))
	w.add("deleted = 0")
	if f.Product != "" {
		w.add("product_id = ?", f.Product)
	}
	if f.IsActive != nil {
		w.add("is_active = ?", boolInt(*f.IsActive))
	}
	if f.Type != "" {
		w.add("type = ?", f.Type)
	}
	return page(tx, "prices", priceCols, w, p, func(s scanner) (*domain.Price, error) { return scanPrice(s) })
}

func affectedOne(res sql.Result, err error, what string) error {
	if err != nil {
		return translate(err, what)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrNotFound
	}
	return nil
}
