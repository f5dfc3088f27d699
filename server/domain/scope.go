package domain

// Scope names the organization and environment a request acts in. Every query that touches an
// organization's objects takes one, so nothing crosses organizations or environments.
type Scope struct {
	OrgID    string
	Livemode bool
}

// Actor is who performs a change: the scope plus the key and request that caused it.
type Actor struct {
	Scope
	KeyID     string
	RequestID string
}
