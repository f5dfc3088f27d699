package core

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"net/mail"
	"strings"
	"time"

	"golang.org/x/crypto/argon2"

	"troco/db"
	"troco/server/domain"
)

// Dashboard sign-in rules.
const (
	SigninLinkTTL     = 15 * time.Minute
	SessionIdle       = 12 * time.Hour
	MaxSigninFailures = 10
	LockoutDuration   = 15 * time.Minute
	MinPasswordLength = 10
	// BootstrapOwnerEmail is the owner a first start gives the bootstrap organization.
	BootstrapOwnerEmail = "admin@localhost"
)

// ErrSigninFailed is every refused sign-in (unknown e-mail, wrong password, locked account):
// one answer, so the page does not tell which e-mails exist.
var ErrSigninFailed = errors.New("sign-in failed")

// ErrLocked is returned (wrapped in ErrSigninFailed's message) when the account is locked.
var ErrLocked = errors.New("account locked")

// UserInput describes a person to add to an organization.
type UserInput struct {
	OrgID string
	Email string
	Role  string
}

// CreateUser adds a person with a role to an organization.
func CreateUser(tx *db.Tx, in UserInput) (*domain.User, error) {
	if _, err := tx.FindOrganizationByID(in.OrgID); err != nil {
		return nil, notFound(err, "org", "organization", in.OrgID)
	}
	email := strings.ToLower(strings.TrimSpace(in.Email))
	if email == "" {
		return nil, domain.Missing("email")
	}
	if a, err := mail.ParseAddress(email); err != nil || a.Address != email || len(email) > 254 {
		return nil, domain.Invalid("email", "email must be an e-mail address such as ana@example.com.")
	}
	if domain.RoleRank(in.Role) == 0 {
		return nil, domain.Invalid("role", "role must be owner, admin, developer or viewer.")
	}
	u := &domain.User{Organization: in.OrgID, Email: email, Role: in.Role}
	if err := tx.CreateUser(u); err != nil {
		if errors.Is(err, db.ErrConflict) {
			return nil, domain.Conflict(domain.CodeResourceStateConflict, "%s already belongs to organization %s.", email, in.OrgID)
		}
		return nil, err
	}
	return u, nil
}

// SigninLink is a one-time link that signs a person in.
type SigninLink struct {
	Token     string
	ExpiresAt time.Time
}

// IssueSigninLink creates a one-time sign-in token for user id, valid 15 minutes.
func IssueSigninLink(tx *db.Tx, userID string) (*SigninLink, error) {
	if _, err := tx.FindUserByID(userID); err != nil {
		return nil, notFound(err, "user", "user", userID)
	}
	token := randomToken()
	exp := tx.Now.Add(SigninLinkTTL).UTC().Truncate(time.Second)
	if err := tx.CreateSigninLink(domain.HashToken(token), userID, exp.Unix()); err != nil {
		return nil, err
	}
	return &SigninLink{Token: token, ExpiresAt: exp}, nil
}

// SigninURL is the address of a sign-in link under baseURL.
func SigninURL(baseURL, token string) string {
	return strings.TrimRight(baseURL, "/") + "/dashboard/signin/link/" + token
}

// ConsumeSigninLink uses a one-time token: it returns its user, or ErrSigninFailed when the token
// is unknown, used or expired (a second use signs nobody in).
func ConsumeSigninLink(tx *db.Tx, token string) (*domain.User, error) {
	id, err := tx.UseSigninLink(domain.HashToken(token))
	if errors.Is(err, db.ErrNotFound) {
		return nil, ErrSigninFailed
	}
	if err != nil {
		return nil, err
	}
	return tx.FindUserByID(id)
}

// SetPassword validates and stores a new password (argon2id).
func SetPassword(tx *db.Tx, userID, password string) error {
	if len([]rune(password)) < MinPasswordLength {
		return domain.Invalid("password", "the password must have at least %d characters.", MinPasswordLength)
	}
	if len(password) > 1024 {
		return domain.Invalid("password", "the password must have at most 1024 bytes.")
	}
	return tx.SetUserPassword(userID, HashPassword(password))
}

// argon2id parameters (RFC 9106's second recommended option, lighter memory).
const (
	argonTime    = 2
	argonMemory  = 64 * 1024
	argonThreads = 2
	argonKeyLen  = 32
)

// HashPassword returns the PHC-style encoding of an argon2id hash of password with a random salt.
func HashPassword(password string) string {
	salt := make([]byte, 16)
	_, _ = rand.Read(salt)
	key := argon2.IDKey([]byte(password), salt, argonTime, argonMemory, argonThreads, argonKeyLen)
	b64 := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, argonMemory, argonTime, argonThreads, b64.EncodeToString(salt), b64.EncodeToString(key))
}

// CheckPassword reports whether password matches an encoded argon2id hash (constant time).
func CheckPassword(encoded, password string) bool {
	parts := strings.Split(encoded, "$")
	if len(parts) != 6 || parts[1] != "argon2id" {
		return false
	}
	var m uint32
	var t uint32
	var p uint8
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &m, &t, &p); err != nil || m > 1<<20 || t > 10 {
		return false
	}
	b64 := base64.RawStdEncoding
	salt, err1 := b64.DecodeString(parts[4])
	want, err2 := b64.DecodeString(parts[5])
	if err1 != nil || err2 != nil || len(want) == 0 {
		return false
	}
	got := argon2.IDKey([]byte(password), salt, t, m, p, uint32(len(want)))
	return subtle.ConstantTimeCompare(got, want) == 1
}

// PasswordSignin checks email and password for organization-agnostic sign-in: the first user
// with that e-mail whose password matches. Failures count toward the lockout (10 failures lock
// the account 15 minutes; a locked account refuses even the right password).
func PasswordSignin(tx *db.Tx, email, password string) (*domain.User, error) {
	users, err := tx.FindUsersByEmail(strings.ToLower(strings.TrimSpace(email)))
	if err != nil {
		return nil, err
	}
	for _, u := range users {
		if !u.LockedUntil.IsZero() && tx.Now.Before(u.LockedUntil.Time) {
			return nil, ErrLocked
		}
	}
	for _, u := range users {
		if u.PasswordHash != "" && CheckPassword(u.PasswordHash, password) {
			if err := tx.ClearSigninFailures(u.ID); err != nil {
				return nil, err
			}
			return u, nil
		}
	}
	if len(users) == 0 {
		// Spend the same time as a real check, so timing does not reveal which e-mails exist.
		CheckPassword(dummyHash, password)
	}
	for _, u := range users {
		if err := tx.RecordSigninFailure(u.ID, MaxSigninFailures, tx.Now.Add(LockoutDuration).Unix()); err != nil {
			return nil, err
		}
	}
	return nil, ErrSigninFailed
}

var dummyHash = HashPassword("not a password of anybody")

// NewSessionToken returns a random browser session token.
func NewSessionToken() string { return randomToken() }

func randomToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// Audit appends who did what to the organization's audit trail.
func Audit(tx *db.Tx, u *domain.User, action, objectID, detail string) error {
	return tx.InsertAudit(&domain.AuditEntry{OrgID: u.Organization, UserID: u.ID, UserEmail: u.Email, Action: action, ObjectID: objectID, Detail: detail})
}

// BootstrapOwner gives a fresh organization its owner admin@localhost and returns a sign-in link,
// or nil when the organization already has people.
func BootstrapOwner(tx *db.Tx, orgID string) (*domain.User, *SigninLink, error) {
	users, err := tx.ListUsers(orgID)
	if err != nil || len(users) > 0 {
		return nil, nil, err
	}
	u, err := CreateUser(tx, UserInput{OrgID: orgID, Email: BootstrapOwnerEmail, Role: domain.RoleOwner})
	if err != nil {
		return nil, nil, err
	}
	link, err := IssueSigninLink(tx, u.ID)
	return u, link, err
}
