package core

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/mail"
	"net/netip"
	"runtime"
	"slices"
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

// MatchPassword returns the users whose password matches, oldest first (argon2id, constant
// time; with no user it still spends a hash's time, so timing does not reveal which e-mails
// exist). A person with accounts in several organizations under one e-mail and one password
// matches them all: the first is signed in, the others are offered by the organization switcher.
func MatchPassword(users []*domain.User, password string) []*domain.User {
	var out []*domain.User
	for _, u := range users {
		if u.PasswordHash != "" && CheckPassword(u.PasswordHash, password) {
			out = append(out, u)
		}
	}
	if len(users) == 0 {
		CheckPassword(dummyHash(), password)
	}
	return out
}

// RecordSignin records a sign-in attempt: a match on an account that is not locked (checked
// again here) clears the failures and returns the user (the first of matched); anything else
// counts a failure for every candidate (10 failures lock the account for 15 minutes) and returns
// ErrSigninFailed.
func RecordSignin(tx *db.Tx, users []*domain.User, matched []*domain.User) (*domain.User, error) {
	if len(matched) > 0 {
		u, err := tx.FindUserByID(matched[0].ID)
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

// Per-address sign-in limits: failed sign-ins (wrong password, unknown e-mail, locked account,
// wrong second-factor code) are counted per client address as well as per account, in the
// database, so every replica enforces the same count. MaxSigninFailuresPerIP failures within
// SigninIPWindow refuse every sign-in from that address for SigninIPBlock.
const (
	MaxSigninFailuresPerIP = 30
	SigninIPWindow         = 15 * time.Minute
	SigninIPBlock          = 15 * time.Minute
)

// SigninAddress is the key failed sign-ins are counted under for a remote address ("host:port"):
// the IPv4 address, or the /64 network of an IPv6 address (one host usually holds a whole /64).
func SigninAddress(remoteAddr string) string {
	host := remoteAddr
	if h, _, err := net.SplitHostPort(remoteAddr); err == nil {
		host = h
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return host
	}
	ip = ip.Unmap()
	if ip.Is4() {
		return ip.String()
	}
	p, _ := ip.Prefix(64)
	return p.String()
}

// SigninAddressBlocked reports whether sign-ins from addr are refused now, and until when.
func SigninAddressBlocked(tx *db.Tx, addr string) (bool, time.Time, error) {
	st, err := tx.FindSigninIP(addr)
	if err != nil {
		return false, time.Time{}, err
	}
	until := time.Unix(st.BlockedUntil, 0).UTC()
	return st.BlockedUntil > tx.Now.Unix(), until, nil
}

// RecordSigninAddressFailure counts a failed sign-in from addr and reports whether the address
// is now blocked.
func RecordSigninAddressFailure(tx *db.Tx, addr string) (bool, error) {
	st, err := tx.RecordSigninIPFailure(addr, MaxSigninFailuresPerIP, int64(SigninIPWindow/time.Second), int64(SigninIPBlock/time.Second))
	if err != nil {
		return false, err
	}
	return st.BlockedUntil > tx.Now.Unix(), nil
}

// RemoveUser takes person id out of by's organization: owners and admins may remove people,
// only an owner removes an owner, and the last owner stays. Their sessions end at once (the
// next request of their browser is signed out) and the removal is in the audit trail.
func RemoveUser(tx *db.Tx, by *domain.User, id string) (*domain.User, error) {
	u, err := tx.FindUserByID(id)
	if err != nil || u.Organization != by.Organization {
		return nil, notFound(db.ErrNotFound, "user", "user", id)
	}
	if domain.RoleRank(by.Role) < domain.RoleRank(domain.RoleAdmin) {
		return nil, domain.Forbidden("Your role does not allow this.")
	}
	if u.Role == domain.RoleOwner && by.Role != domain.RoleOwner {
		return nil, domain.Conflict(domain.CodePermissionDenied, "Only an owner can remove an owner.")
	}
	if err := removeUser(tx, u); err != nil {
		return nil, err
	}
	return u, Audit(tx, by, "user.removed", u.ID, u.Email+" ("+u.Role+")")
}

// RemoveUserCommandLine is RemoveUser for the administration command (`troco user remove`): the
// operator who (cli:$USER) stands for the person, and the last owner still stays.
func RemoveUserCommandLine(tx *db.Tx, who, id string) (*domain.User, error) {
	u, err := tx.FindUserByID(id)
	if err != nil {
		return nil, notFound(err, "id", "user", id)
	}
	if err := removeUser(tx, u); err != nil {
		return nil, err
	}
	return u, AuditCommandLine(tx, u.Organization, who, "user.removed", u.ID, u.Email+" ("+u.Role+")")
}

// removeUser deletes u (sessions and sign-in links with it), keeping the organization's last owner.
func removeUser(tx *db.Tx, u *domain.User) error {
	if u.Role == domain.RoleOwner {
		n, err := tx.CountOwners(u.Organization)
		if err != nil {
			return err
		}
		if n <= 1 {
			return domain.Conflict(domain.CodeResourceStateConflict, "An organization keeps at least one owner; make another person owner first.")
		}
	}
	return tx.DeleteUser(u.ID)
}

// SwitchTarget checks that the person signed in as current may move to their account targetID
// in another organization: it must be one the session's password opened (also), still exist with
// the same e-mail, and not be locked.
func SwitchTarget(tx *db.Tx, current *domain.User, also []string, targetID string) (*domain.User, error) {
	t, err := tx.FindUserByID(targetID)
	if err != nil || !slices.Contains(also, targetID) || t.Email != current.Email {
		return nil, domain.Invalid("user", "This sign-in does not open that organization; sign in with its e-mail and password.")
	}
	if !t.LockedUntil.IsZero() && tx.Now.Before(t.LockedUntil.Time) {
		return nil, domain.Conflict(domain.CodeResourceStateConflict, "The account in organization %s is locked for 15 minutes after 10 failed attempts.", t.Organization)
	}
	return t, nil
}
