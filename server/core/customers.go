package core

import (
	"fmt"
	"regexp"

	"troco/db"
	"troco/server/document"
	"troco/server/domain"
)

// localePattern is the shape of a language tag in preferred_locales (pt-BR, en, en-US).
var localePattern = regexp.MustCompile(`^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$`)

// CustomerParams is the body of customer create and update.
type CustomerParams struct {
	Email       domain.Opt[string]            `json:"email"`
	Name        domain.Opt[string]            `json:"name"`
	Phone       domain.Opt[string]            `json:"phone"`
	Description domain.Opt[string]            `json:"description"`
	Document    domain.Opt[string]            `json:"document"`
	Address     domain.Opt[domain.Address]    `json:"address"`
	Metadata    domain.Opt[map[string]string] `json:"metadata"`
	// PreferredLocales: the customer's languages, most preferred first.
	PreferredLocales domain.Opt[[]string] `json:"preferred_locales"`
	// Timezone is the IANA zone hosted invoice pages and e-mails render in.
	Timezone domain.Opt[string] `json:"timezone"`
}

func (p *CustomerParams) apply(c *domain.Customer) error {
	if p.Email.Set && !p.Email.Null && p.Email.V != "" {
		if err := domain.ValidateEmail("email", p.Email.V); err != nil {
			return err
		}
	}
	for _, f := range []struct {
		dst   **string
		o     domain.Opt[string]
		param string
		max   int
	}{{&c.Email, p.Email, "email", 254}, {&c.Name, p.Name, "name", 256}, {&c.Phone, p.Phone, "phone", 32}, {&c.Description, p.Description, "description", 1000}} {
		if err := applyText(f.dst, f.o, f.param, f.max); err != nil {
			return err
		}
	}
	if p.Document.Set {
		if p.Document.Null || p.Document.V == "" {
			c.Document, c.DocumentType = nil, nil
		} else {
			doc, err := document.Parse(p.Document.V)
			if err != nil {
				return domain.Invalid("document", "document must be a valid CPF or CNPJ: %v.", err)
			}
			c.Document, c.DocumentType = strPtr(doc.Number), strPtr(string(doc.Type))
		}
	}
	if p.Address.Set {
		if p.Address.Null {
			c.Address = nil
		} else {
			a := p.Address.V
			if err := ValidateAddress("address", &a); err != nil {
				return err
			}
			c.Address = &a
		}
	}
	if p.PreferredLocales.Set {
		if p.PreferredLocales.Null {
			c.PreferredLocales = []string{}
		} else {
			if len(p.PreferredLocales.V) > 10 {
				return domain.Invalid("preferred_locales", "preferred_locales takes at most 10 locales.")
			}
			for i, l := range p.PreferredLocales.V {
				if err := domain.ValidateText(fmt.Sprintf("preferred_locales[%d]", i), l, 16); err != nil {
					return err
				}
				if !localePattern.MatchString(l) {
					return domain.Invalid(fmt.Sprintf("preferred_locales[%d]", i), "preferred_locales[%d] must be a language tag such as pt-BR or en.", i)
				}
			}
			c.PreferredLocales = p.PreferredLocales.V
		}
	}
	if p.Timezone.Set {
		if p.Timezone.Null || p.Timezone.V == "" {
			c.Timezone = nil
		} else {
			if _, err := domain.LoadZone(p.Timezone.V); err != nil {
				return domain.Invalid("timezone", "timezone must be an IANA time zone such as America/Sao_Paulo; got %q.", p.Timezone.V)
			}
			c.Timezone = strPtr(p.Timezone.V)
		}
	}
	md, err := domain.ApplyMetadata(c.Metadata, p.Metadata)
	if err != nil {
		return err
	}
	c.Metadata = md
	return nil
}

// ValidateAddress checks the general shape of an address (lengths, country); the stricter
// Brazilian rules for boleto live with the payment methods.
func ValidateAddress(param string, a *domain.Address) error {
	if a.Country == "" {
		a.Country = "BR"
	}
	if len(a.Country) != 2 {
		return domain.Invalid(param+"[country]", "country must be a two-letter ISO 3166-1 code.")
	}
	for _, f := range []struct{ name, v string }{{"line1", a.Line1}, {"number", a.Number}, {"line2", a.Line2}, {"neighborhood", a.Neighborhood}, {"city", a.City}, {"state", a.State}, {"postal_code", a.PostalCode}} {
		if err := domain.ValidateText(param+"["+f.name+"]", f.v, 200); err != nil {
			return err
		}
	}
	return nil
}

// CreateCustomer creates a customer and emits customer.created.
func CreateCustomer(tx *db.Tx, a domain.Actor, p CustomerParams) (*domain.Customer, error) {
	c := &domain.Customer{Metadata: domain.Metadata{}}
	if err := p.apply(c); err != nil {
		return nil, err
	}
	if err := tx.CreateCustomer(a.Scope, c); err != nil {
		return nil, err
	}
	return c, emit(tx, a, "customer.created", c, nil)
}

// GetCustomer returns a customer of the actor's scope.
func GetCustomer(tx *db.Tx, s domain.Scope, id string) (*domain.Customer, error) {
	c, err := tx.FindCustomerByID(s, id)
	return c, notFound(err, "id", "customer", id)
}

// UpdateCustomer applies p to a customer and emits customer.updated with previous_attributes.
func UpdateCustomer(tx *db.Tx, a domain.Actor, id string, p CustomerParams) (*domain.Customer, error) {
	c, err := GetCustomer(tx, a.Scope, id)
	if err != nil {
		return nil, err
	}
	before := *c
	if err := p.apply(c); err != nil {
		return nil, err
	}
	if err := tx.UpdateCustomer(a.Scope, c); err != nil {
		return nil, err
	}
	return c, emit(tx, a, "customer.updated", c, &before)
}

// DeleteCustomer deletes a customer and emits customer.deleted.
func DeleteCustomer(tx *db.Tx, a domain.Actor, id string) (*domain.Deleted, error) {
	c, err := GetCustomer(tx, a.Scope, id)
	if err != nil {
		return nil, err
	}
	for _, f := range customerDeleteHooks {
		if err := f(tx, a, id); err != nil {
			return nil, err
		}
	}
	if err := tx.DeleteCustomer(a.Scope, id); err != nil {
		return nil, err
	}
	return &domain.Deleted{ID: id, Object: "customer", Deleted: true}, emit(tx, a, "customer.deleted", c, nil)
}

// customerDeleteHooks run inside DeleteCustomer's transaction, before the customer goes: what
// other domains end with it (billing cancels the customer's running subscriptions, as Stripe
// does). They are registered by those packages, which import core (core cannot import them).
var customerDeleteHooks []func(tx *db.Tx, a domain.Actor, customer string) error

// OnDeleteCustomer registers f to run in every DeleteCustomer (call it from a package's init).
func OnDeleteCustomer(f func(tx *db.Tx, a domain.Actor, customer string) error) {
	customerDeleteHooks = append(customerDeleteHooks, f)
}
