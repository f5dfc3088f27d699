package core

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"time"
	_ "time/tzdata" // dashboard_settings.timezone is validated against the IANA database on any host

	"troco/db"
	"troco/server/activation"
	"troco/server/document"
	"troco/server/domain"
	"troco/server/fees"
)

// OrgCaller says in which capacity a key calls the organizations API.
type OrgCaller struct {
	// AsPlatform is set when a platform key acts as its platform (no Organization header): it
	// reaches the platform's connected organizations and the platform itself.
	AsPlatform bool
	// Admin is set for keys that may change critical settings (the fee plan): platform keys and
	// organization keys with the admin scope.
	Admin bool
}

// GetOrganization returns an organization the actor may see: its own, or for a platform key, the
// platform itself and its connected organizations. Anything else is a 404. The activation state
// is the one of the key's environment.
func GetOrganization(tx *db.Tx, a domain.Actor, id string) (*domain.Organization, error) {
	self, err := tx.FindOrganizationByID(a.OrgID)
	if err != nil {
		return nil, err
	}
	return getOrganizationAs(tx, a, OrgCaller{AsPlatform: self.Platform != nil}, id)
}

// GetOrganizationAs returns an organization for c: a platform sees itself and its connected
// organizations, an organization only itself; anything else is a 404 naming id.
func GetOrganizationAs(tx *db.Tx, a domain.Actor, c OrgCaller, id string) (*domain.Organization, error) {
	return getOrganizationAs(tx, a, c, id)
}

func getOrganizationAs(tx *db.Tx, a domain.Actor, c OrgCaller, id string) (*domain.Organization, error) {
	o, err := findVisibleOrganization(tx, a, c, id, "id")
	if err != nil {
		return nil, err
	}
	return organizationView(o), nil
}

// findVisibleOrganization loads id in the actor's environment if c may see it.
func findVisibleOrganization(tx *db.Tx, a domain.Actor, c OrgCaller, id, param string) (*domain.Organization, error) {
	o, err := tx.FindOrganizationInMode(id, a.Livemode)
	if err != nil {
		return nil, notFound(err, param, "organization", id)
	}
	if o.ID == a.OrgID {
		return o, nil
	}
	if c.AsPlatform {
		plat, err := callerPlatform(tx, a)
		if err != nil {
			return nil, err
		}
		if o.ConnectedPlatform != nil && *o.ConnectedPlatform == plat {
			return o, nil
		}
	}
	return nil, domain.NotFound(param, "organization", id)
}

// callerPlatform returns the plat_ id of the actor's organization.
func callerPlatform(tx *db.Tx, a domain.Actor) (string, error) {
	self, err := tx.FindOrganizationByID(a.OrgID)
	if err != nil {
		return "", err
	}
	if self.Platform == nil {
		return "", domain.Forbidden("This endpoint requires a platform key (scope platform_admin).")
	}
	return *self.Platform, nil
}

// organizationView is the public object: the default fee plan when the organization has none.
// o must come from FindOrganizationInMode (its Livemode and activation state are the caller's).
func organizationView(o *domain.Organization) *domain.Organization {
	v := *o
	if v.FeePlan == nil {
		v.FeePlan = DefaultFeePlan()
	} else if raw, ok := v.FeePlan.(json.RawMessage); ok {
		p := DefaultFeePlan() // a plan stored before a field existed keeps that field's default
		if json.Unmarshal(raw, &p) == nil {
			v.FeePlan = p
		}
	}
	if v.PayoutAccount != nil {
		if raw, ok := v.PayoutAccount.(json.RawMessage); ok && (len(raw) == 0 || string(raw) == "null") {
			v.PayoutAccount = nil
		}
	}
	if v.Requirements.Missing == nil {
		v.Requirements.Missing = []string{}
	}
	return &v
}

// FeePlan is the public shape of an organization's fee plan (CONTRACT 5).
type FeePlan struct {
	CardFeeRate             int64 `json:"card_fee_rate"`
	CardFeeAmount           int64 `json:"card_fee_amount"`
	PixFeeAmount            int64 `json:"pix_fee_amount"`
	BoletoFeeAmount         int64 `json:"boleto_fee_amount"`
	InstallmentInterestRate int64 `json:"installment_interest_rate"`
	// DisputeFeeAmount is withdrawn with the disputed amount when a dispute opens (kept when it
	// is won, as Brazilian acquirers do).
	DisputeFeeAmount int64 `json:"dispute_fee_amount"`
}

// DefaultDisputeFee is the dispute fee of the default plan: R$ 15,00.
const DefaultDisputeFee = 1500

// DefaultFeePlan is the plan of every organization without its own (both modes).
func DefaultFeePlan() FeePlan {
	p := fees.DefaultPlan
	return FeePlan{CardFeeRate: p.CardFeeRate, CardFeeAmount: p.CardFixedFee, PixFeeAmount: p.PixFee, BoletoFeeAmount: p.BoletoFee, InstallmentInterestRate: fees.DefaultInstallmentInterestRate,
		DisputeFeeAmount: DefaultDisputeFee}
}

// OrganizationFeePlan returns the fee plan an organization pays (its own, or the default).
func OrganizationFeePlan(o *domain.Organization) FeePlan {
	if p, ok := organizationView(o).FeePlan.(FeePlan); ok {
		return p
	}
	return DefaultFeePlan()
}

// OrganizationParams is the body of organization create and update (SPEC 4.9).
type OrganizationParams struct {
	Name              domain.Opt[string]            `json:"name"`
	DisplayName       domain.Opt[string]            `json:"display_name"`
	Document          domain.Opt[string]            `json:"document"`
	Email             domain.Opt[string]            `json:"email"`
	Phone             domain.Opt[string]            `json:"phone"`
	Address           *domain.Address               `json:"address"`
	FeePlan           domain.Opt[json.RawMessage]   `json:"fee_plan"`
	DashboardSettings *DashboardSettingsParams      `json:"dashboard_settings"`
	MaxInstallments   domain.Opt[int]               `json:"max_installments"`
	CheckoutSettings  *CheckoutSettingsParams       `json:"checkout_settings"`
	Metadata          domain.Opt[map[string]string] `json:"metadata"`
}

// CheckoutSettingsParams are the writable defaults of the organization's hosted checkout pages.
// In branding an absent field keeps its value and null clears it (the page then uses troco's
// look); template null means troco's default (minimal).
type CheckoutSettingsParams struct {
	Branding *BrandingParams    `json:"branding"`
	Template domain.Opt[string] `json:"template"`
}

// BrandingParams are the fields of a branding object in an update.
type BrandingParams struct {
	DisplayName     domain.Opt[string] `json:"display_name"`
	LogoURL         domain.Opt[string] `json:"logo_url"`
	PrimaryColor    domain.Opt[string] `json:"primary_color"`
	BackgroundColor domain.Opt[string] `json:"background_color"`
	BorderStyle     domain.Opt[string] `json:"border_style"`
}

// applyCheckoutSettings validates p and applies it to o's checkout settings.
func applyCheckoutSettings(o *domain.Organization, p *CheckoutSettingsParams) error {
	if p == nil {
		return nil
	}
	if b := p.Branding; b != nil {
		nb := o.CheckoutSettings.Branding
		for _, f := range []struct {
			in  domain.Opt[string]
			dst **string
		}{{b.DisplayName, &nb.DisplayName}, {b.LogoURL, &nb.LogoURL}, {b.PrimaryColor, &nb.PrimaryColor},
			{b.BackgroundColor, &nb.BackgroundColor}, {b.BorderStyle, &nb.BorderStyle}} {
			if f.in.Set {
				*f.dst = nil
				if !f.in.Null {
					*f.dst = strPtr(f.in.V)
				}
			}
		}
		if err := domain.ValidateBranding("checkout_settings[branding]", &nb); err != nil {
			return err
		}
		o.CheckoutSettings.Branding = nb
	}
	if p.Template.Set {
		o.CheckoutSettings.Template = nil
		if !p.Template.Null {
			if !slices.Contains(domain.CheckoutTemplates, p.Template.V) {
				return domain.Invalid("checkout_settings[template]", "checkout_settings[template] must be minimal, booking or null.")
			}
			o.CheckoutSettings.Template = strPtr(p.Template.V)
		}
	}
	return nil
}

// saveCheckoutSettings stores o's checkout settings when the request changed them.
func saveCheckoutSettings(tx *db.Tx, o *domain.Organization, p *CheckoutSettingsParams) error {
	if p == nil {
		return nil
	}
	template := ""
	if o.CheckoutSettings.Template != nil {
		template = *o.CheckoutSettings.Template
	}
	return tx.SetOrganizationBranding(o.ID, o.CheckoutSettings.Branding, template)
}

// DashboardSettingsParams are the writable display preferences.
type DashboardSettingsParams struct {
	Timezone *string `json:"timezone"`
}

// feePlanParams is a fee plan in a request; absent fields keep their current value.
type feePlanParams struct {
	CardFeeRate             *int64 `json:"card_fee_rate"`
	CardFeeAmount           *int64 `json:"card_fee_amount"`
	PixFeeAmount            *int64 `json:"pix_fee_amount"`
	BoletoFeeAmount         *int64 `json:"boleto_fee_amount"`
	InstallmentInterestRate *int64 `json:"installment_interest_rate"`
	DisputeFeeAmount        *int64 `json:"dispute_fee_amount"`
}

// maxFeeAmount bounds a flat fee (R$ 1.000,00).
const maxFeeAmount = 100_000

func livemodeMismatch() *domain.Error {
	return &domain.Error{Status: http.StatusBadRequest, Type: domain.TypeInvalidRequest, Code: domain.CodeLivemodeMismatch, Param: "fee_plan",
		Message: "fee_plan is accepted only with a live key; omit it with a test key (even null or \"default\")."}
}

// applyFeePlan validates a fee_plan value and sets o.FeePlan: "default" or null restore the
// default plan; an object sets some or all of the plan's fields.
func applyFeePlan(o *domain.Organization, raw json.RawMessage, null bool) error {
	trimmed := bytes.TrimSpace(raw)
	if null || string(trimmed) == `"default"` {
		o.FeePlan = nil
		return nil
	}
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return domain.Invalid("fee_plan", "fee_plan must be an object (card_fee_rate, card_fee_amount, pix_fee_amount, boleto_fee_amount, installment_interest_rate, dispute_fee_amount), \"default\" or null.")
	}
	var in feePlanParams
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return domain.Invalid("fee_plan["+te.Field+"]", "fee_plan[%s] must be a non-negative integer.", te.Field)
		}
		field := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		return domain.Invalid("fee_plan", "fee_plan has an unknown or invalid field: %s.", field)
	}
	plan := OrganizationFeePlan(o)
	for _, f := range []struct {
		name string
		in   *int64
		dst  *int64
		max  int64
	}{
		{"card_fee_rate", in.CardFeeRate, &plan.CardFeeRate, 10000},
		{"card_fee_amount", in.CardFeeAmount, &plan.CardFeeAmount, maxFeeAmount},
		{"pix_fee_amount", in.PixFeeAmount, &plan.PixFeeAmount, maxFeeAmount},
		{"boleto_fee_amount", in.BoletoFeeAmount, &plan.BoletoFeeAmount, maxFeeAmount},
		{"installment_interest_rate", in.InstallmentInterestRate, &plan.InstallmentInterestRate, 10000},
		{"dispute_fee_amount", in.DisputeFeeAmount, &plan.DisputeFeeAmount, maxFeeAmount},
	} {
		if f.in == nil {
			continue
		}
		if *f.in < 0 || *f.in > f.max {
			return domain.Invalid("fee_plan["+f.name+"]", "fee_plan[%s] must be an integer between 0 and %d (rates in basis points, amounts in centavos).", f.name, f.max)
		}
		*f.dst = *f.in
	}
	b, _ := json.Marshal(plan)
	o.FeePlan = json.RawMessage(b)
	return nil
}

// ValidateTimezone accepts an IANA time zone name (America/Sao_Paulo); "Local", offsets such as
// "UTC+3" and empty names are rejected.
func ValidateTimezone(param, tz string) error {
	if tz == "" || tz == "Local" || strings.ContainsAny(tz, " \\") || strings.HasPrefix(tz, "/") || strings.Contains(tz, "..") {
		return domain.Invalid(param, "%s must be an IANA time zone name such as America/Sao_Paulo.", param)
	}
	if _, err := time.LoadLocation(tz); err != nil {
		return domain.Invalid(param, "%s must be an IANA time zone name such as America/Sao_Paulo; %q is unknown.", param, tz)
	}
	return nil
}

// apply validates p and applies it to o. create reports whether the organization is new.
func (p *OrganizationParams) apply(o *domain.Organization, create bool) error {
	if p.Name.Set {
		name := strings.TrimSpace(p.Name.V)
		if p.Name.Null || name == "" {
			if create {
				return domain.Missing("name")
			}
			return domain.Invalid("name", "name cannot be empty.")
		}
		if err := domain.ValidateText("name", name, 200); err != nil {
			return err
		}
		o.Name = name
	} else if create {
		return domain.Missing("name")
	}
	if p.DisplayName.Set {
		o.DisplayName = nil
		if v := strings.TrimSpace(p.DisplayName.V); !p.DisplayName.Null && v != "" {
			if err := domain.ValidateText("display_name", v, 100); err != nil {
				return err
			}
			o.DisplayName = strPtr(v)
		}
	}
	if p.Document.Set {
		if p.Document.Null || strings.TrimSpace(p.Document.V) == "" {
			o.Document, o.DocumentType = nil, nil
		} else {
			doc, err := document.Parse(p.Document.V)
			if err != nil {
				return domain.Invalid("document", "document must be a valid CPF (11 digits) or CNPJ (14 characters, alphanumeric allowed) with correct check digits: %v.", strings.TrimPrefix(err.Error(), "document: "))
			}
			o.Document, o.DocumentType = strPtr(doc.Number), strPtr(string(doc.Type))
		}
	}
	if p.Email.Set {
		if p.Email.Null || p.Email.V == "" {
			o.Email = nil
		} else {
			if err := domain.ValidateEmail("email", p.Email.V); err != nil {
				return err
			}
			o.Email = strPtr(p.Email.V)
		}
	}
	if p.Phone.Set {
		if p.Phone.Null || p.Phone.V == "" {
			o.Phone = nil
		} else {
			n := activation.NormalizePhone(p.Phone.V)
			if n == "" {
				return domain.Invalid("phone", "phone must be a Brazilian phone number with area code, such as +55 11 91234-5678.")
			}
			o.Phone = strPtr(n)
		}
	}
	if p.Address != nil {
		a := document.Address{Line1: p.Address.Line1, Number: p.Address.Number, Line2: p.Address.Line2, Neighborhood: p.Address.Neighborhood,
			City: p.Address.City, State: p.Address.State, PostalCode: p.Address.PostalCode, Country: p.Address.Country}.Normalize()
		if param, err := a.Validate(); err != nil {
			param = "address" + strings.TrimPrefix(param, "billing_address")
			return domain.Invalid(param, "%s.", "address"+strings.TrimPrefix(err.Error(), "billing_address"))
		}
		for _, f := range []struct{ name, v string }{{"line1", a.Line1}, {"number", a.Number}, {"line2", a.Line2}, {"neighborhood", a.Neighborhood}, {"city", a.City}} {
			if err := domain.ValidateText("address["+f.name+"]", f.v, 200); err != nil {
				return err
			}
		}
		o.Address = &domain.Address{Line1: a.Line1, Number: a.Number, Line2: a.Line2, Neighborhood: a.Neighborhood, City: a.City, State: a.State, PostalCode: a.PostalCode, Country: a.Country}
	}
	if p.FeePlan.Set {
		if err := applyFeePlan(o, p.FeePlan.V, p.FeePlan.Null); err != nil {
			return err
		}
	}
	if p.DashboardSettings != nil && p.DashboardSettings.Timezone != nil {
		if err := ValidateTimezone("dashboard_settings[timezone]", *p.DashboardSettings.Timezone); err != nil {
			return err
		}
		o.DashboardSettings.Timezone = *p.DashboardSettings.Timezone
	}
	if p.MaxInstallments.Set {
		if p.MaxInstallments.Null || p.MaxInstallments.V < 1 || p.MaxInstallments.V > 12 {
			return domain.Invalid("max_installments", "max_installments must be an integer between 1 and 12.")
		}
		o.MaxInstallments = p.MaxInstallments.V
	}
	if err := applyCheckoutSettings(o, p.CheckoutSettings); err != nil {
		return err
	}
	if p.Metadata.Set {
		if err := domain.ValidateMetadata(p.Metadata.V); err != nil {
			return err
		}
		o.Metadata = domain.MergeMetadata(o.Metadata, p.Metadata.V)
		if err := domain.ValidateMetadata(o.Metadata); err != nil {
			return err
		}
	}
	return nil
}

// checkFeePlanAccess applies SPEC 4.9: fee_plan only with a live key (any presence with a test
// key is 400 livemode_mismatch), and only from a platform or an admin-scope key.
func checkFeePlanAccess(a domain.Actor, c OrgCaller, p *OrganizationParams) error {
	if !p.FeePlan.Set {
		return nil
	}
	if !a.Livemode {
		return livemodeMismatch()
	}
	if !c.Admin {
		return domain.Forbidden("fee_plan is set by the organization's platform or with an admin key.")
	}
	return nil
}

// CreateConnectedOrganization creates an organization connected to the calling platform.
func CreateConnectedOrganization(tx *db.Tx, a domain.Actor, c OrgCaller, p OrganizationParams) (*domain.Organization, error) {
	if err := checkFeePlanAccess(a, c, &p); err != nil {
		return nil, err
	}
	plat, err := callerPlatform(tx, a)
	if err != nil {
		return nil, err
	}
	o := &domain.Organization{ConnectedPlatform: &plat, Metadata: domain.Metadata{}}
	if err := p.apply(o, true); err != nil {
		return nil, err
	}
	if err := tx.CreateOrganization(o, false); err != nil {
		return nil, err
	}
	if err := saveCheckoutSettings(tx, o, p.CheckoutSettings); err != nil {
		return nil, err
	}
	created, err := tx.FindOrganizationInMode(o.ID, a.Livemode)
	if err != nil {
		return nil, err
	}
	return organizationView(created), nil
}

// UpdateOrganization applies p to an organization the caller may see and emits
// organization.updated when something changed. The document cannot change once the
// organization is in review or active in either environment.
func UpdateOrganization(tx *db.Tx, a domain.Actor, c OrgCaller, id string, p OrganizationParams) (*domain.Organization, error) {
	if err := checkFeePlanAccess(a, c, &p); err != nil {
		return nil, err
	}
	o, err := findVisibleOrganization(tx, a, c, id, "id")
	if err != nil {
		return nil, err
	}
	if p.FeePlan.Set && o.Platform != nil {
		return nil, domain.Forbidden("A platform's own fee plan is set by troco's administrators.")
	}
	before := organizationView(o)
	if err := p.apply(o, false); err != nil {
		return nil, err
	}
	if len(diff(before, organizationView(o))) == 0 {
		return before, nil // nothing changes: no write, no event
	}
	if p.Document.Set && !sameString(before.Document, o.Document) {
		for _, live := range []bool{true, false} {
			m, err := tx.FindOrganizationInMode(o.ID, live)
			if err != nil {
				return nil, err
			}
			if m.ActivationStatus == domain.ActivationActive || m.ActivationStatus == domain.ActivationInReview {
				return nil, domain.Conflict(domain.CodeResourceStateConflict, "The document of an organization in review or active cannot change.")
			}
		}
	}
	if err := tx.UpdateOrganization(o); err != nil {
		return nil, err
	}
	if err := saveCheckoutSettings(tx, o, p.CheckoutSettings); err != nil {
		return nil, err
	}
	after, err := tx.FindOrganizationInMode(o.ID, a.Livemode)
	if err != nil {
		return nil, err
	}
	return organizationView(after), emitOrganizationUpdated(tx, a.RequestID, before, organizationView(after))
}

func sameString(a, b *string) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// emitOrganizationUpdated writes organization.updated when before and after differ: in the
// organization's own scope and, for a connected organization, a copy in its platform's scope so
// the platform's webhook endpoints learn the result of an activation (SPEC 6.3). Both views are
// of the same environment, which is the events' environment.
func emitOrganizationUpdated(tx *db.Tx, requestID string, before, after *domain.Organization) error {
	if len(diff(before, after)) == 0 {
		return nil
	}
	a := domain.Actor{Scope: domain.Scope{OrgID: after.ID, Livemode: after.Livemode}, RequestID: requestID}
	if err := emit(tx, a, "organization.updated", after, before); err != nil {
		return err
	}
	if after.ConnectedPlatform == nil {
		return nil
	}
	plat, err := tx.FindOrganizationByPlatformID(*after.ConnectedPlatform)
	if err != nil {
		return err
	}
	a.OrgID = plat.ID
	return emit(tx, a, "organization.updated", after, before)
}

// ListConnectedOrganizations pages the calling platform's connected organizations.
func ListConnectedOrganizations(tx *db.Tx, a domain.Actor, f db.OrganizationFilter, p db.ListParams) ([]*domain.Organization, bool, error) {
	plat, err := callerPlatform(tx, a)
	if err != nil {
		return nil, false, err
	}
	switch f.ActivationStatus {
	case "", domain.ActivationNotSubmitted, domain.ActivationInReview, domain.ActivationActive, domain.ActivationDisabled:
	default:
		return nil, false, domain.Invalid("activation_status", "activation_status must be not_submitted, in_review, active or disabled.")
	}
	items, more, err := tx.ListConnectedOrganizations(plat, a.Livemode, f, p)
	for i := range items {
		items[i] = organizationView(items[i])
	}
	return items, more, err
}
