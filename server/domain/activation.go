package domain

// Activation session statuses of SPEC 3.1.
const (
	SessionCreated    = "created"
	SessionInProgress = "in_progress"
	SessionSubmitted  = "submitted"
)

// Object names of the two kinds of hosted activation sessions: a platform's activation session
// for a connected organization (SPEC 2.2) and an organization's own onboarding session.
const (
	ObjectActivationSession = "activation_session"
	ObjectOnboardingSession = "onboarding_session"
)

// ActivationCodeTTL is how long a hosted activation url's authorization_code works (SPEC 8).
const ActivationCodeTTL = 60

// ActivationSession is one hosted activation attempt of an organization (SPEC 2.2). Onboarding
// sessions (os_) share the shape, without platform.
type ActivationSession struct {
	ID           string   `json:"id"`
	Object       string   `json:"object"`
	CreatedAt    Time     `json:"created_at"`
	ExpiresAt    Time     `json:"expires_at"`
	Livemode     bool     `json:"livemode"`
	Metadata     Metadata `json:"metadata"`
	OpenedAt     Time     `json:"opened_at"`
	Organization string   `json:"organization"`
	Platform     *string  `json:"platform,omitempty"`
	ReturnURL    string   `json:"return_url"`
	Status       string   `json:"status"`
	UpdatedAt    Time     `json:"updated_at"`
	URL          *string  `json:"url"`

	// OwnerOrgID is the organization whose keys see the session: the platform's organization
	// for activation sessions, the organization itself for onboarding sessions.
	OwnerOrgID  string            `json:"-"`
	SubmittedAt Time              `json:"-"`
	Draft       map[string]string `json:"-"`
}

// Open reports whether the session can still be opened, filled and renewed.
func (s *ActivationSession) Open() bool {
	return s.Status == SessionCreated || s.Status == SessionInProgress
}

// ActivationState is an organization's activation in one environment: the financial state that
// organization.updated reports (SPEC 6.3).
type ActivationState struct {
	Status         string
	DisabledReason *string
	Missing        []string
	PayoutAccount  any // the organization's payout account object, or nil
	Attempts       int
}

// ActivationProfile is what the seller entered in the hosted activation form beyond the public
// organization fields; it prefills the next attempt.
type ActivationProfile struct {
	TradeName      string         `json:"trade_name,omitempty"`
	Representative Representative `json:"representative"`
	BankAccount    BankAccount    `json:"bank_account"`
	DocumentFile   string         `json:"document_file,omitempty"`
}

// Representative is the person legally responsible for the organization.
type Representative struct {
	Name      string `json:"name,omitempty"`
	Document  string `json:"document,omitempty"`   // CPF, digits
	BirthDate string `json:"birth_date,omitempty"` // YYYY-MM-DD
}

// BankAccount is a Brazilian bank account that receives payouts.
type BankAccount struct {
	BankCode      string `json:"bank_code,omitempty"`      // COMPE code, 3 digits
	Branch        string `json:"branch,omitempty"`         // agência, digits with an optional -digit
	AccountNumber string `json:"account_number,omitempty"` // digits, dash, check digit
	AccountType   string `json:"account_type,omitempty"`   // checking, savings or payment
}

// Payout account statuses.
const (
	PayoutAccountConnected    = "connected"
	PayoutAccountDisconnected = "disconnected"
)

// Payout account types.
var PayoutAccountTypes = []string{"checking", "savings", "payment"}

// PayoutAccount is a bank account that receives an organization's payouts (pa_).
type PayoutAccount struct {
	ID             string   `json:"id"`
	Object         string   `json:"object"`
	Organization   string   `json:"organization"`
	Livemode       bool     `json:"livemode"`
	Status         string   `json:"status"`
	BankCode       string   `json:"bank_code"`
	Branch         string   `json:"branch"`
	AccountType    string   `json:"account_type"`
	Last4          string   `json:"last4"`
	HolderName     string   `json:"holder_name"`
	HolderDocument string   `json:"holder_document"`
	Metadata       Metadata `json:"metadata"`
	CreatedAt      Time     `json:"created_at"`
	UpdatedAt      Time     `json:"updated_at"`
	DisconnectedAt Time     `json:"disconnected_at"`

	AccountNumber string `json:"-"`
}
