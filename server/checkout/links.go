package checkout

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"troco/db"
	"troco/server/domain"
)

// LinkPath is the public path of a payment link.
func LinkPath(id string) string { return "/l/" + id }

// LinkParams is the body of payment link create and update.
type LinkParams struct {
	Config
	LineItems []LineItemParams  `json:"line_items"`
	Active    *bool             `json:"active"`
	Metadata  map[string]string `json:"metadata"`
}

// ErrLinkUnavailable is returned when a buyer opens a link that is inactive or deleted.
var ErrLinkUnavailable = errors.New("checkout: payment link unavailable")

// applyLink validates p's configuration by building the session it would create (mode,
// defaults), then copies it onto l. Only fields present in p change.
func applyLink(tx *db.Tx, a domain.Actor, l *domain.PaymentLink, p LinkParams) error {
	items := p.LineItems
	if items == nil {
		for _, it := range l.LineItems {
			q := it.Quantity
			items = append(items, LineItemParams{Price: it.Price, Quantity: &q})
		}
	}
	for i, it := range p.LineItems {
		if it.PriceData != nil {
			return domain.Invalid(fmt.Sprintf("line_items[%d][price_data]", i), "A payment link's line items name a price (price_…); create the price first.")
		}
	}
	c, err := resolveCart(tx, a, items)
	if err != nil {
		return err
	}
	l.Currency = c.Currency
	l.LineItems = l.LineItems[:0]
	for _, li := range c.Items {
		l.LineItems = append(l.LineItems, domain.PaymentLinkItem{Price: li.Price.ID, Quantity: li.Quantity})
	}
	merged := linkConfig(l)
	if p.PaymentMethodTypes != nil {
		merged.PaymentMethodTypes = p.PaymentMethodTypes
	}
	if p.PaymentMethodCollection != nil {
		merged.PaymentMethodCollection = p.PaymentMethodCollection
	}
	if p.PaymentMethodOptions != nil {
		merged.PaymentMethodOptions = p.PaymentMethodOptions
	}
	for _, f := range []struct{ dst, src **bool }{
		{&merged.AllowPromotionCodes, &p.AllowPromotionCodes}, {&merged.InvoiceCreation, &p.InvoiceCreation},
		{&merged.RequireBillingAddress, &p.RequireBillingAddress}, {&merged.RequireDocument, &p.RequireDocument},
		{&merged.RequirePhone, &p.RequirePhone},
	} {
		if *f.src != nil {
			*f.dst = *f.src
		}
	}
	for _, f := range []struct{ dst, src **string }{
		{&merged.SubmitType, &p.SubmitType}, {&merged.Template, &p.Template},
		{&merged.CancelURL, &p.CancelURL}, {&merged.SuccessURL, &p.SuccessURL},
	} {
		if *f.src != nil {
			*f.dst = *f.src
		}
	}
	if p.Branding != nil {
		merged.Branding = p.Branding
	}
	// Validate through the same rules as a session.
	var probe domain.CheckoutSession
	if err := merged.apply(&probe, c.Mode); err != nil {
		return err
	}
	types, err := methodTypes(merged.PaymentMethodTypes, c.Mode)
	if err != nil {
		return err
	}
	opts, err := methodOptions(merged.PaymentMethodOptions, types, 0)
	if err != nil {
		return err
	}
	l.PaymentMethodTypes = types
	l.PaymentMethodOptions = opts
	l.PaymentMethodCollection = probe.PaymentMethodCollection
	l.AllowPromotionCodes, l.InvoiceCreation = probe.AllowPromotionCodes, probe.InvoiceCreation
	l.RequireBillingAddress, l.RequireDocument, l.RequirePhone = probe.RequireBillingAddress, probe.RequireDocument, probe.RequirePhone
	l.SubmitType, l.Template, l.Branding = probe.SubmitType, probe.Template, probe.Branding
	l.CancelURL, l.SuccessURL = probe.CancelURL, probe.SuccessURL
	if p.Active != nil {
		l.Active = *p.Active
	}
	if p.Metadata != nil {
		if err := domain.ValidateMetadata(p.Metadata); err != nil {
			return err
		}
		l.Metadata = domain.MergeMetadata(l.Metadata, p.Metadata)
		if err := domain.ValidateMetadata(l.Metadata); err != nil {
			return err
		}
	}
	return nil
}

// linkConfig is the session configuration a link stores, in the shape of a create body.
func linkConfig(l *domain.PaymentLink) Config {
	b := func(v bool) *bool { return &v }
	c := Config{
		PaymentMethodOptions: l.PaymentMethodOptions, AllowPromotionCodes: b(l.AllowPromotionCodes), InvoiceCreation: b(l.InvoiceCreation),
		RequireBillingAddress: b(l.RequireBillingAddress), RequireDocument: b(l.RequireDocument), RequirePhone: b(l.RequirePhone),
		Template: l.Template, Branding: l.Branding, CancelURL: l.CancelURL, SuccessURL: l.SuccessURL,
	}
	if l.PaymentMethodTypes != nil {
		c.PaymentMethodTypes = slices.Clone(l.PaymentMethodTypes)
	}
	if l.PaymentMethodCollection != "" {
		v := l.PaymentMethodCollection
		c.PaymentMethodCollection = &v
	}
	if l.SubmitType != "" {
		v := l.SubmitType
		c.SubmitType = &v
	}
	return c
}

// CreateLink creates an active payment link; its url opens a fresh session on every visit.
func CreateLink(tx *db.Tx, a domain.Actor, base string, p LinkParams) (*domain.PaymentLink, error) {
	if len(p.LineItems) == 0 {
		return nil, domain.Missing("line_items")
	}
	l := &domain.PaymentLink{
		ID: domain.NewID(domain.PrefixPaymentLink), Object: "payment_link", Active: true, Livemode: a.Livemode,
		Metadata: domain.Metadata{}, CreatedAt: domain.At(tx.Now), UpdatedAt: domain.At(tx.Now),
	}
	if err := applyLink(tx, a, l, p); err != nil {
		return nil, err
	}
	l.URL = strings.TrimRight(base, "/") + LinkPath(l.ID)
	return l, tx.CreatePaymentLink(a.Scope, l)
}

// GetLink returns a payment link of the scope.
func GetLink(tx *db.Tx, s domain.Scope, id string) (*domain.PaymentLink, error) {
	l, err := tx.FindPaymentLinkByID(s, id)
	if errors.Is(err, db.ErrNotFound) {
		return nil, domain.NotFound("id", "payment link", id)
	}
	return l, err
}

// UpdateLink changes a link (active: false deactivates it; its URL then shows a clear page).
func UpdateLink(tx *db.Tx, a domain.Actor, id string, p LinkParams) (*domain.PaymentLink, error) {
	l, err := GetLink(tx, a.Scope, id)
	if err != nil {
		return nil, err
	}
	if p.LineItems != nil && len(p.LineItems) == 0 {
		return nil, domain.Invalid("line_items", "line_items cannot be empty.")
	}
	if err := applyLink(tx, a, l, p); err != nil {
		return nil, err
	}
	return l, tx.UpdatePaymentLink(a.Scope, l)
}

// DeleteLink deletes a link; its URL stops working.
func DeleteLink(tx *db.Tx, a domain.Actor, id string) (*domain.Deleted, error) {
	if _, err := GetLink(tx, a.Scope, id); err != nil {
		return nil, err
	}
	if err := tx.DeletePaymentLink(a.Scope, id); err != nil {
		return nil, err
	}
	return &domain.Deleted{ID: id, Object: "payment_link", Deleted: true}, nil
}

// OpenLink is a buyer opening a link's URL: it creates a fresh open session in the link's scope
// (emitting checkout.session.created) and returns it. requestID names the buyer's request in the
// event. An inactive or deleted link, or one whose prices can no longer be sold, returns
// ErrLinkUnavailable.
func OpenLink(tx *db.Tx, id, requestID, base string) (*domain.CheckoutSession, error) {
	l, scope, err := tx.FindPaymentLinkAnyScope(id)
	if errors.Is(err, db.ErrNotFound) {
		return nil, ErrLinkUnavailable
	}
	if err != nil {
		return nil, err
	}
	if !l.Active {
		return nil, ErrLinkUnavailable
	}
	// As Stripe does, the link's metadata is copied to every session it creates.
	p := SessionParams{Config: linkConfig(l), Metadata: map[string]string(domain.MergeMetadata(nil, l.Metadata))}
	for _, it := range l.LineItems {
		q := it.Quantity
		p.LineItems = append(p.LineItems, LineItemParams{Price: it.Price, Quantity: &q})
	}
	a := domain.Actor{Scope: scope, RequestID: requestID}
	cs, err := createSession(tx, a, base, p, &l.ID)
	if _, ok := domain.AsError(err); ok {
		// A price or product was archived since the link was made: the link cannot sell now.
		return nil, ErrLinkUnavailable
	}
	return cs, err
}
