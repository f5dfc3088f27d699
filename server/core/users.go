package core

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"net/mail"
	"runtime"
	"strings"
	"sync"
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

// NewPasswordHash validates a new password and returns its argon2id hash. Call it outside any
// transaction: hashing takes tens of milliseconds and must not hold the database's writer.
func NewPasswordHash(password string) (string, error) {
	if len([]rune(password)) < MinPasswordLength {
		return "", domain.Invalid("password", "the password must have at least %d characters.", MinPasswordLength)
	}
	if len(password) > 1024 {
		return "", domain.Invalid("password", "the password must have at most 1024 bytes.")
	}
	return HashPassword(password), nil
}

// SetPassword validates and stores a new password (argon2id). It hashes inside tx: for
// administration and tests; request handlers use NewPasswordHash then SetPasswordHash.
func SetPassword(tx *db.Tx, userID, password string) error {
	hash, err := NewPasswordHash(password)
	if err != nil {
		return err
	}
	return SetPasswordHash(tx, userID, hash)
}

// SetPasswordHash stores a hash made by NewPasswordHash.
func SetPasswordHash(tx *db.Tx, userID, hash string) error { return tx.SetUserPassword(userID, hash) }

// hashSlots bounds concurrent argon2id computations (64 MiB each), so a flood of sign-in
// attempts cannot exhaust memory.
var hashSlots = make(chan struct{}, max(2, runtime.NumCPU()))

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
	hashSlots <- struct{}{}
	key := argon2.IDKey([]byte(password), salt, argonTime, argonMemory, argonThreads, argonKeyLen)
	<-hashSlots
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
	hashSlots <- struct{}{}
	got := argon2.IDKey([]byte(password), salt, t, m, p, uint32(len(want)))
	<-hashSlots
	return subtle.ConstantTimeCompare(got, want) == 1
}

// SigninCandidates returns the people with that e-mail (one per organization) and whether any
// of them is locked. Read them, check the password with MatchPassword outside any transaction,
// then record the outcome with RecordSignin.
func SigninCandidates(tx *db.Tx, email string) ([]*domain.User, bool, error) {
	users, err := tx.FindUsersByEmail(strings.ToLower(strings.TrimSpace(email)))
	if err != nil {
		return nil, false, err
	}
	for _, u := range users {
		if !u.LockedUntil.IsZero() && tx.Now.Before(u.LockedUntil.Time) {
			return users, true, nil
		}
	}
	return users, false, nil
}

// MatchPassword returns the first user whose password matches, or nil (argon2id, constant time;
// with no user it still spends a hash's time, so timing does not reveal which e-mails exist).
func MatchPassword(users []*domain.User, password string) *domain.User {
	for _, u := range users {
		if u.PasswordHash != "" && CheckPassword(u.PasswordHash, password) {
			return u
		}
	}
	if len(users) == 0 {
		CheckPassword(dummyHash(), password)
	}
	return nil
}

// RecordSignin records a sign-in attempt: a match on an account that is not locked (checked
// again here) clears the failures and returns the user; anything else counts a failure for every
// candidate (10 failures lock the account for 15 minutes) and returns ErrSigninFailed.
func RecordSignin(tx *db.Tx, users []*domain.User, matched *domain.User) (*domain.User, error) {
	if matched != nil {
		u, err := tx.FindUserByID(matched.ID)
		if err != nil {
			return nil, err
		}
		if u.LockedUntil.IsZero() || !tx.Now.Before(u.LockedUntil.Time) {
			return u, tx.ClearSigninFailures(u.ID)
		}
		return nil, ErrLocked
	}
	for _, u := range users {
		if err := tx.RecordSigninFailure(u.ID, MaxSigninFailures, tx.Now.Add(LockoutDuration).Unix()); err != nil {
			return nil, err
		}
	}
	return nil, ErrSigninFailed
}

// dummyHash is checked when no account matches, so that a sign-in takes as long either way. It
// is made on first use, not at start: an argon2id hash takes 64 MiB and, on a busy machine, a
// second, which every process start (and the CLI's every command) would otherwise pay.
var dummyHash = sync.OnceValue(func() string { return HashPassword("not a password of anybody") })

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

// AuditCommandLine appends to the audit trail what an administration command did: who is the
// command line's operator (cli:$USER, or --by), since no dashboard person is signed in.
func AuditCommandLine(tx *db.Tx, orgID, who, action, objectID, detail string) error {
	return tx.InsertAudit(&domain.AuditEntry{OrgID: orgID, UserEmail: who, Action: action, ObjectID: objectID, Detail: detail})
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
