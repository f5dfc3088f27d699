package domain

import "strings"

// Organization activation statuses of SPEC 2.9.
const (
	ActivationNotSubmitted = "not_submitted"
	ActivationInReview     = "in_review"
	ActivationActive       = "active"
	ActivationDisabled     = "disabled"
)

// Organization owns API keys and every object; it is shared by both environments (SPEC 8.6).
type Organization struct {
	ID                string            `json:"id"`
	Object            string            `json:"object"`
	Name              string            `json:"name"`
	DisplayName       *string           `json:"display_name"`
	Livemode          bool              `json:"livemode"`
	ActivationStatus  string            `json:"activation_status"`
	Document          *string           `json:"document"`
	DocumentType      *string           `json:"document_type"`
	Email             *string           `json:"email"`
	Phone             *string           `json:"phone"`
	Address           *Address          `json:"address"`
	Requirements      Requirements      `json:"requirements"`
	PayoutAccount     any               `json:"payout_account"`
	FeePlan           any               `json:"fee_plan"`
	DashboardSettings DashboardSettings `json:"dashboard_settings"`
	CheckoutSettings  CheckoutSettings  `json:"checkout_settings"`
	MaxInstallments   int               `json:"max_installments"`
	Platform          *string           `json:"platform"`
	ConnectedPlatform *string           `json:"connected_platform"`
	Metadata          Metadata          `json:"metadata"`
	CreatedAt         Time              `json:"created_at"`
	UpdatedAt         Time              `json:"updated_at"`

	SplitRulesConfigured bool `json:"-"`
	ActivationAttempts   int  `json:"-"`
}

// Requirements tells what blocks an organization's activation.
type Requirements struct {
	DisabledReason *string  `json:"disabled_reason"`
	Missing        []string `json:"missing"`
}

// DashboardSettings are display preferences; the timezone never affects billing (SPEC 9.2).
type DashboardSettings struct {
	Timezone string `json:"timezone"`
}

// Address is a postal address.
type Address struct {
	Line1        string `json:"line1"`
	Number       string `json:"number,omitempty"`
	Line2        string `json:"line2,omitempty"`
	Neighborhood string `json:"neighborhood,omitempty"`
	City         string `json:"city"`
	State        string `json:"state"`
	PostalCode   string `json:"postal_code"`
	Country      string `json:"country"`
}

// PlatformActive reports whether the organization is a platform allowed to hold platform keys.
func (o *Organization) PlatformActive() bool {
	return o.Platform != nil && o.ActivationStatus == ActivationActive && o.SplitRulesConfigured
}

// ShownName is the name buyers see (checkout, PIX code, boleto): the organization's checkout
// branding display name, else its display name, else its (legal) name.
func (o *Organization) ShownName() string {
	if b := o.CheckoutSettings.Branding.DisplayName; b != nil && strings.TrimSpace(*b) != "" {
		return *b
	}
	if o.DisplayName != nil && strings.TrimSpace(*o.DisplayName) != "" {
		return *o.DisplayName
	}
	return o.Name
}
