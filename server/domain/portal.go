package domain

// PortalSession is a customer portal session (prefix cps_): a single-use url that opens the
// hosted portal for one customer. customer_session_token is only in the create response.
type PortalSession struct {
	ID                   string  `json:"id"`
	Object               string  `json:"object"`
	CreatedAt            Time    `json:"created_at"`
	Customer             string  `json:"customer"`
	CustomerSessionToken *string `json:"customer_session_token,omitempty"`
	ExpiresAt            Time    `json:"expires_at"`
	Livemode             bool    `json:"livemode"`
	Locale               string  `json:"locale"`
	ReturnURL            string  `json:"return_url"`
	URL                  string  `json:"url"`
}

// CustomerSessionTokenPrefix starts every customer session token.
const CustomerSessionTokenPrefix = "troco_cst_"
