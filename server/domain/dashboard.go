package domain

// Dashboard roles (a person's role in one organization), strongest first.
const (
	RoleOwner     = "owner"
	RoleAdmin     = "admin"
	RoleDeveloper = "developer"
	RoleViewer    = "viewer"
)

// RoleRank orders roles: owner 4, admin 3, developer 2, viewer 1; unknown 0.
func RoleRank(role string) int {
	switch role {
	case RoleOwner:
		return 4
	case RoleAdmin:
		return 3
	case RoleDeveloper:
		return 2
	case RoleViewer:
		return 1
	}
	return 0
}

// User is a person who signs in to the dashboard of one organization.
type User struct {
	Object        string `json:"object"`
	ID            string `json:"id"`
	Organization  string `json:"organization"`
	Email         string `json:"email"`
	Role          string `json:"role"`
	Language      string `json:"language"`
	CreatedAt     Time   `json:"created"`
	PasswordHash  string `json:"-"`
	TOTPSecret    string `json:"-"` // sealed
	TOTPEnabled   bool   `json:"totp_enabled"`
	FailedSignins int    `json:"-"`
	LockedUntil   Time   `json:"-"`
}

// AuditEntry records who did what in the dashboard (owners read them).
type AuditEntry struct {
	ID        string
	OrgID     string
	UserID    string
	UserEmail string
	Action    string
	ObjectID  string
	Detail    string
	CreatedAt Time
}

// RequestLog is one recorded /v1 or /api/v1 request, bodies redacted.
type RequestLog struct {
	ID           string // the Request-Id
	Livemode     bool
	Method       string
	Path         string
	Status       int
	KeyID        string
	DurationUS   int64
	ObjectID     string
	RequestBody  string
	ResponseBody string
	CreatedAt    Time
	// ResponseEvent, when set, names the event whose object's first ResponseLen bytes are
	// exactly the response (written only: the log stores a reference instead of a copy).
	ResponseEvent string
	ResponseLen   int
}
