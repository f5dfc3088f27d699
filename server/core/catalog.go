package core

import (
	"slices"
	"strings"

	"troco/db"
	"troco/server/domain"
	"troco/server/files"
)

// ProductParams is the body of product create and update.
type ProductParams struct {
	Name             domain.Opt[string]            `json:"name"`
	Description      domain.Opt[string]            `json:"description"`
	ImageURL         domain.Opt[string]            `json:"image_url"`
	IsActive         domain.Opt[bool]              `json:"is_active"`
	IsTaxApplicable  domain.Opt[bool]              `json:"is_tax_applicable"`
	DefaultPrice     domain.Opt[string]            `json:"default_price"`
	DefaultPriceData *PriceData                    `json:"default_price_data"`
	Metadata         domain.Opt[map[string]string] `json:"metadata"`
	// FilesBaseURL, set by the adapter, prefixes the URL of a product_image file named in
	// image_url (file_…): the product keeps that file's stable public URL.
	FilesBaseURL string `json:"-"`
}

// resolveImage replaces an image_url naming a file (file_…) with the file's public URL; the file
// must be a product_image of the same organization and environment (400 naming image_url).
func (p *ProductParams) resolveImage(tx *db.Tx, s domain.Scope) error {
	v, ok := p.ImageURL.Value()
	if !ok || !strings.HasPrefix(v, domain.PrefixFile) {
		return nil
	}
	f, err := FileOfPurpose(tx, s, v, domain.PurposeProductImage, "image_url")
	if err != nil {
		return err
	}
	p.ImageURL.V = p.FilesBaseURL + files.ContentsPath(f.ID)
	return nil
}

// PriceData creates a price together with its product.
type PriceData struct {
	UnitAmount  *int64           `json:"unit_amount"`
	Currency    string           `json:"currency"`
	Recurring   *RecurringParams `json:"recurring"`
	TaxBehavior string           `json:"tax_behavior"`
	Name        *string          `json:"name"`
}

func (p *ProductParams) apply(pr *domain.Product) error {
	if p.Name.Set {
		if p.Name.Null || p.Name.V == "" {
			return domain.Invalid("name", "name cannot be empty.")
		}
		if err := domain.ValidateText("name", p.Name.V, 250); err != nil {
			return err
		}
		pr.Name = p.Name.V
	}
	if err := applyText(&pr.Description, p.Description, "description", 5000); err != nil {
		return err
	}
	if p.ImageURL.Set && !p.ImageURL.Null && p.ImageURL.V != "" {
		if err := domain.ValidateURL("image_url", p.ImageURL.V, 2048); err != nil {
			return err
		}
	}
	if err := applyText(&pr.ImageURL, p.ImageURL, "image_url", 2048); err != nil {
		return err
	}
	if v, ok := p.IsActive.Value(); ok {
		pr.IsActive = v
	} else if p.IsActive.Null {
		return domain.Invalid("is_active", "is_active must be a boolean.")
	}
	if v, ok := p.IsTaxApplicable.Value(); ok {
		pr.IsTaxApplicable = v
	} else if p.IsTaxApplicable.Null {
		return domain.Invalid("is_tax_applicable", "is_tax_applicable must be a boolean.")
	}
	md, err := domain.ApplyMetadata(pr.Metadata, p.Metadata)
	if err != nil {
		return err
	}
	pr.Metadata = md
	return nil
}

// CreateProduct creates a product (and its default price when default_price_data is given).
func CreateProduct(tx *db.Tx, a domain.Actor, p ProductParams) (*domain.Product, error) {
	if !p.Name.Set || p.Name.Null {
		return nil, domain.Missing("name")
	}
	if p.DefaultPrice.Set {
		return nil, domain.Invalid("default_price", "default_price can only be set on update; use default_price_data to create a price with the product.")
	}
	pr := &domain.Product{IsActive: true, Metadata: domain.Metadata{}, Prices: []domain.Price{}}
	if err := p.resolveImage(tx, a.Scope); err != nil {
		return nil, err
	}
	if err := p.apply(pr); err != nil {
		return nil, err
	}
	var price *domain.Price
	if d := p.DefaultPriceData; d != nil {
		var err error
		if price, err = newPrice("default_price_data", PriceParams{UnitAmount: d.UnitAmount, Currency: d.Currency, Recurring: d.Recurring, TaxBehavior: d.TaxBehavior, Name: optOf(d.Name)}); err != nil {
			return nil, err
		}
	}
	if err := tx.CreateProduct(a.Scope, pr); err != nil {
		return nil, err
	}
	if price != nil {
		price.Product = pr.ID
		if err := tx.CreatePrice(a.Scope, price); err != nil {
			return nil, err
		}
		pr.DefaultPrice = &price.ID
		if err := tx.UpdateProduct(a.Scope, pr); err != nil {
			return nil, err
		}
		pr.Prices = []domain.Price{*price}
	}
	if err := emit(tx, a, "product.created", pr, nil); err != nil {
		return nil, err
	}
	if price != nil {
		if err := emit(tx, a, "price.created", price, nil); err != nil {
			return nil, err
		}
	}
	return pr, nil
}

// GetProduct returns a product with its prices.
func GetProduct(tx *db.Tx, s domain.Scope, id string) (*domain.Product, error) {
	p, err := tx.FindProductByID(s, id)
	return p, notFound(err, "id", "product", id)
}

// UpdateProduct applies p and emits product.updated.
func UpdateProduct(tx *db.Tx, a domain.Actor, id string, p ProductParams) (*domain.Product, error) {
	pr, err := GetProduct(tx, a.Scope, id)
	if err != nil {
		return nil, err
	}
	if p.DefaultPriceData != nil {
		return nil, domain.Invalid("default_price_data", "default_price_data can only be used when creating a product.")
	}
	before := *pr
	if err := p.resolveImage(tx, a.Scope); err != nil {
		return nil, err
	}
	if err := p.apply(pr); err != nil {
		return nil, err
	}
	if p.DefaultPrice.Set {
		if p.DefaultPrice.Null || p.DefaultPrice.V == "" {
			pr.DefaultPrice = nil
		} else {
			price, err := tx.FindPriceByID(a.Scope, p.DefaultPrice.V)
			if err != nil {
				return nil, notFound(err, "default_price", "price", p.DefaultPrice.V)
			}
			if price.Product != pr.ID {
				return nil, domain.Invalid("default_price", "price %s belongs to another product.", price.ID)
			}
			pr.DefaultPrice = &price.ID
		}
	}
	if err := tx.UpdateProduct(a.Scope, pr); err != nil {
		return nil, err
	}
	return pr, emit(tx, a, "product.updated", pr, &before)
}

// DeleteProduct deletes a product that has no prices left (409 otherwise).
func DeleteProduct(tx *db.Tx, a domain.Actor, id string) (*domain.Deleted, error) {
	pr, err := GetProduct(tx, a.Scope, id)
	if err != nil {
		return nil, err
	}
	if len(pr.Prices) > 0 {
		return nil, domain.Conflict(domain.CodeResourceStateConflict, "This product cannot be deleted because it has %d price(s); delete or archive them first, or set is_active to false.", len(pr.Prices))
	}
	if err := tx.DeleteProduct(a.Scope, id); err != nil {
		return nil, err
	}
	return &domain.Deleted{ID: id, Object: "product", Deleted: true}, emit(tx, a, "product.deleted", pr, nil)
}

// RecurringParams is the recurring cycle of a price being created: interval_count may be left
// out (1) but not sent as 0.
type RecurringParams struct {
	Interval        string `json:"interval"`
	IntervalCount   *int   `json:"interval_count"`
	TrialPeriodDays *int   `json:"trial_period_days"`
	UsageType       string `json:"usage_type"`
}

// PriceParams is the body of price create and update.
type PriceParams struct {
	Product     string                        `json:"product"`
	UnitAmount  *int64                        `json:"unit_amount"`
	Currency    string                        `json:"currency"`
	Recurring   *RecurringParams              `json:"recurring"`
	TaxBehavior string                        `json:"tax_behavior"`
	Name        domain.Opt[string]            `json:"name"`
	IsActive    *bool                         `json:"is_active"`
	Metadata    domain.Opt[map[string]string] `json:"metadata"`
}

func newPrice(param string, p PriceParams) (*domain.Price, error) {
	prefix := func(f string) string {
		if param == "" {
			return f
		}
		return param + "[" + f + "]"
	}
	if p.UnitAmount == nil {
		return nil, domain.Missing(prefix("unit_amount"))
	}
	if err := domain.ValidateAmount(prefix("unit_amount"), *p.UnitAmount, 0); err != nil {
		return nil, err
	}
	cur, err := domain.ValidateCurrency(prefix("currency"), p.Currency)
	if err != nil {
		return nil, err
	}
	price := &domain.Price{Currency: cur, UnitAmount: *p.UnitAmount, Type: domain.PriceOneTime, TaxBehavior: "unspecified", IsActive: true, Name: p.Name.Ptr(), Metadata: domain.Metadata{}}
	if price.Name != nil {
		if err := domain.ValidateText(prefix("name"), *price.Name, 250); err != nil {
			return nil, err
		}
	}
	if p.Recurring != nil {
		r := domain.Recurring{Interval: p.Recurring.Interval, IntervalCount: 1, TrialPeriodDays: p.Recurring.TrialPeriodDays, UsageType: p.Recurring.UsageType}
		if p.Recurring.IntervalCount != nil {
			r.IntervalCount = *p.Recurring.IntervalCount
		}
		if err := r.Validate(prefix("recurring")); err != nil {
			return nil, err
		}
		price.Recurring, price.Type = &r, domain.PriceRecurring
	}
	if p.TaxBehavior != "" {
		if !slices.Contains(domain.TaxBehaviors, p.TaxBehavior) {
			return nil, domain.Invalid(prefix("tax_behavior"), "tax_behavior must be unspecified, inclusive or exclusive.")
		}
		price.TaxBehavior = p.TaxBehavior
	}
	if p.IsActive != nil {
		price.IsActive = *p.IsActive
	}
	md, err := domain.ApplyMetadata(nil, p.Metadata)
	if err != nil {
		return nil, err
	}
	price.Metadata = md
	return price, nil
}

// CreatePrice creates a price for an existing product of the scope and emits price.created.
func CreatePrice(tx *db.Tx, a domain.Actor, p PriceParams) (*domain.Price, error) {
	if p.Product == "" {
		return nil, domain.Missing("product")
	}
	price, err := newPrice("", p)
	if err != nil {
		return nil, err
	}
	prod, err := tx.FindProductByID(a.Scope, p.Product)
	if err != nil {
		return nil, notFound(err, "product", "product", p.Product)
	}
	price.Product = prod.ID
	if err := tx.CreatePrice(a.Scope, price); err != nil {
		return nil, err
	}
	if prod.DefaultPrice == nil {
		before := *prod
		prod.DefaultPrice = &price.ID
		if err := tx.UpdateProduct(a.Scope, prod); err != nil {
			return nil, err
		}
		prod.Prices = append(prod.Prices, *price)
		if err := emit(tx, a, "product.updated", prod, &before); err != nil {
			return nil, err
		}
	}
	return price, emit(tx, a, "price.created", price, nil)
}

// GetPrice returns a price of the scope.
func GetPrice(tx *db.Tx, s domain.Scope, id string) (*domain.Price, error) {
	p, err := tx.FindPriceByID(s, id)
	return p, notFound(err, "id", "price", id)
}

// UpdatePrice changes the mutable fields of a price (name, is_active, tax_behavior while
// unspecified, metadata); amounts and recurrence are immutable, as on Stripe.
func UpdatePrice(tx *db.Tx, a domain.Actor, id string, p PriceParams) (*domain.Price, error) {
	price, err := GetPrice(tx, a.Scope, id)
	if err != nil {
		return nil, err
	}
	switch {
	case p.Product != "":
		return nil, domain.Invalid("product", "a price's product cannot be changed.")
	case p.UnitAmount != nil:
		return nil, domain.Invalid("unit_amount", "a price's unit_amount cannot be changed; create a new price.")
	case p.Currency != "" && p.Currency != price.Currency:
		return nil, domain.Invalid("currency", "a price's currency cannot be changed.")
	case p.Recurring != nil:
		return nil, domain.Invalid("recurring", "a price's recurrence cannot be changed; create a new price.")
	}
	before := *price
	if err := applyText(&price.Name, p.Name, "name", 250); err != nil {
		return nil, err
	}
	if p.IsActive != nil {
		price.IsActive = *p.IsActive
	}
	if p.TaxBehavior != "" && p.TaxBehavior != price.TaxBehavior {
		if !slices.Contains(domain.TaxBehaviors, p.TaxBehavior) {
			return nil, domain.Invalid("tax_behavior", "tax_behavior must be unspecified, inclusive or exclusive.")
		}
		if price.TaxBehavior != "unspecified" {
			return nil, domain.Invalid("tax_behavior", "tax_behavior can only be set once, while it is unspecified.")
		}
		price.TaxBehavior = p.TaxBehavior
	}
	md, err := domain.ApplyMetadata(price.Metadata, p.Metadata)
	if err != nil {
		return nil, err
	}
	price.Metadata = md
	if err := tx.UpdatePrice(a.Scope, price); err != nil {
		return nil, err
	}
	return price, emit(tx, a, "price.updated", price, &before)
}

// DeletePrice deletes a price and emits price.deleted.
func DeletePrice(tx *db.Tx, a domain.Actor, id string) (*domain.Deleted, error) {
	price, err := GetPrice(tx, a.Scope, id)
	if err != nil {
		return nil, err
	}
	prod, err := tx.FindProductByID(a.Scope, price.Product)
	if err != nil {
		return nil, err
	}
	if err := tx.DeletePrice(a.Scope, id); err != nil {
		return nil, err
	}
	if prod.DefaultPrice != nil && *prod.DefaultPrice == id {
		after, err := tx.FindProductByID(a.Scope, prod.ID)
		if err != nil {
			return nil, err
		}
		if err := emit(tx, a, "product.updated", after, prod); err != nil {
			return nil, err
		}
	}
	return &domain.Deleted{ID: id, Object: "price", Deleted: true}, emit(tx, a, "price.deleted", price, nil)
}

// optOf turns a pointer into a present-or-absent optional field.
func optOf[T any](p *T) domain.Opt[T] {
	if p == nil {
		return domain.Opt[T]{}
	}
	return domain.Opt[T]{Set: true, V: *p}
}

// InlinePriceData is a checkout line item's price_data (as Stripe's): the price is created with
// the session, for an existing product or a new one described by product_data.
type InlinePriceData struct {
	Product     string             `json:"product"`
	ProductData *InlineProductData `json:"product_data"`
	UnitAmount  *int64             `json:"unit_amount"`
	Currency    string             `json:"currency"`
	Recurring   *RecurringParams   `json:"recurring"`
	TaxBehavior string             `json:"tax_behavior"`
}

// InlineProductData describes the product an inline price creates.
type InlineProductData struct {
	Name        string            `json:"name"`
	Description *string           `json:"description"`
	Metadata    map[string]string `json:"metadata"`
}

// CreateInlinePrice creates the price of a line item's price_data (named param) and, with
// product_data, its product. Both are archived (is_active false), as Stripe's inline prices: they
// belong to the session, are readable through the API and never offered anywhere else. No event
// is emitted for them.
func CreateInlinePrice(tx *db.Tx, a domain.Actor, param string, d *InlinePriceData) (*domain.Price, *domain.Product, error) {
	switch {
	case d.Product == "" && d.ProductData == nil:
		return nil, nil, domain.Missing(param + "[product]")
	case d.Product != "" && d.ProductData != nil:
		return nil, nil, domain.Invalid(param+"[product_data]", "Give %s[product] or %s[product_data], not both.", param, param)
	}
	inactive := false
	price, err := newPrice(param, PriceParams{UnitAmount: d.UnitAmount, Currency: d.Currency, Recurring: d.Recurring, TaxBehavior: d.TaxBehavior, IsActive: &inactive})
	if err != nil {
		return nil, nil, err
	}
	var prod *domain.Product
	if d.Product != "" {
		if prod, err = tx.FindProductByID(a.Scope, d.Product); err != nil {
			return nil, nil, notFound(err, param+"[product]", "product", d.Product)
		}
		if !prod.IsActive {
			return nil, nil, domain.Invalid(param+"[product]", "The product %s is not active.", prod.ID)
		}
	} else {
		pd := d.ProductData
		name := strings.TrimSpace(pd.Name)
		if name == "" {
			return nil, nil, domain.Missing(param + "[product_data][name]")
		}
		if err := domain.ValidateText(param+"[product_data][name]", name, 250); err != nil {
			return nil, nil, err
		}
		prod = &domain.Product{Name: name, Description: pd.Description, IsActive: false, Metadata: domain.Metadata{}, Prices: []domain.Price{}}
		if prod.Description != nil {
			if err := domain.ValidateText(param+"[product_data][description]", *prod.Description, 5000); err != nil {
				return nil, nil, err
			}
		}
		if pd.Metadata != nil {
			md, err := domain.ApplyMetadata(nil, domain.Opt[map[string]string]{Set: true, V: pd.Metadata})
			if err != nil {
				return nil, nil, err
			}
			prod.Metadata = md
		}
		if err := tx.CreateProduct(a.Scope, prod); err != nil {
			return nil, nil, err
		}
	}
	price.Product = prod.ID
	if err := tx.CreatePrice(a.Scope, price); err != nil {
		return nil, nil, err
	}
	return price, prod, nil
}
