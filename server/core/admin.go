package core

import (
	"errors"
	"strings"
	"time"

	"troco/db"
	"troco/server/document"
	"troco/server/domain"
)

// OrganizationInput describes an organization created by an administrator (CLI) or a platform.
type OrganizationInput struct {
	Name             string
	DisplayName      string
	Document         string
	Platform         bool
	ConnectedTo      string // plat_… of the platform that orchestrates it
	ActivationStatus string
}

// CreateOrganization validates in and creates the organization.
func CreateOrganization(tx *db.Tx, in OrganizationInput) (*domain.Organization, error) {
	in.Name = strings.TrimSpace(in.Name)
	if in.Name == "" {
		return nil, domain.Missing("name")
	}
	if err := domain.ValidateTextRunes("name", in.Name); err != nil {
		return nil, err
	}
	o := &domain.Organization{Name: in.Name, ActivationStatus: in.ActivationStatus}
	if v := strings.TrimSpace(in.DisplayName); v != "" {
		if err := domain.ValidateText("display_name", v, 100); err != nil {
			return nil, err
		}
		o.DisplayName = &v
	}
	switch in.ActivationStatus {
	case "", domain.ActivationNotSubmitted, domain.ActivationInReview, domain.ActivationActive, domain.ActivationDisabled:
	default:
		return nil, domain.Invalid("activation_status", "activation_status must be not_submitted, in_review, active or disabled.")
	}
	if in.Document != "" {
		doc, err := document.Parse(in.Document)
		if err != nil {
			return nil, domain.Invalid("document", "document must be a valid CPF or CNPJ: %v.", err)
		}
		num, typ := doc.Number, string(doc.Type)
		o.Document, o.DocumentType = &num, &typ
	}
	if in.ConnectedTo != "" {
		if in.Platform {
			return nil, domain.Invalid("connected_to", "a platform cannot itself be connected to another platform.")
		}
		if _, err := tx.FindOrganizationByPlatformID(in.ConnectedTo); err != nil {
			return nil, notFound(err, "connected_to", "platform", in.ConnectedTo)
		}
		o.ConnectedPlatform = &in.ConnectedTo
	}
	if err := tx.CreateOrganization(o, in.Platform); err != nil {
		return nil, err
	}
	return organizationView(o), nil // the public shape (the default fee plan), as the API shows it
}

// APIKeyInput describes a key to create.
type APIKeyInput struct {
	OrgID     string
	Livemode  bool
	Scopes    []string
	Name      string
	ExpiresAt time.Time
	// Token, when set, is registered as is (the --sandbox-key of CI) instead of a random one.
	Token string
}

// MaxAPIKeyName bounds an API key's name (characters).
const MaxAPIKeyName = 200

// CreateAPIKey creates a key and returns it with its clear token (shown once). Platform keys
// require the platform to be active with split rules configured (SPEC 5.7).
func CreateAPIKey(tx *db.Tx, in APIKeyInput) (*domain.APIKey, error) {
	org, err := tx.FindOrganizationByID(in.OrgID)
	if err != nil {
		return nil, notFound(err, "org", "organization", in.OrgID)
	}
	scopes, err := domain.NormalizeScopes(in.Scopes)
	if err != nil {
		return nil, err
	}
	k := &domain.APIKey{Organization: org.ID, Scopes: scopes, Livemode: in.Livemode, Name: strings.TrimSpace(in.Name)}
	if k.Platform() {
		if org.Platform == nil {
			return nil, domain.Invalid("scopes", "platform_admin keys belong to platforms; %s is not a platform.", org.ID)
		}
		if !org.PlatformActive() {
			return nil, domain.Conflict(domain.CodeResourceStateConflict, "A platform key can be created only when the platform is active and its split rules are configured.")
		}
	}
	if k.Name == "" {
		k.Name = "API key"
	}
	if len([]rune(k.Name)) > MaxAPIKeyName {
		return nil, domain.Invalid("name", "name must be at most %d characters.", MaxAPIKeyName)
	}
	if !in.ExpiresAt.IsZero() {
		if !in.ExpiresAt.After(tx.Now) {
			return nil, domain.Invalid("expires_at", "expires_at must be in the future.")
		}
		k.ExpiresAt = domain.At(in.ExpiresAt)
	}
	token := in.Token
	if token == "" {
		token = domain.NewToken(in.Livemode)
	} else {
		live, err := domain.ParseToken(token)
		if err != nil {
			return nil, domain.Invalid("token", "invalid token: %v.", err)
		}
		if live != in.Livemode {
			return nil, domain.Invalid("token", "the token's prefix does not match the key's environment.")
		}
	}
	if err := tx.CreateAPIKey(k, token); err != nil {
		if errors.Is(err, db.ErrConflict) {
			return nil, domain.Conflict(domain.CodeResourceStateConflict, "This token is already registered.")
		}
		return nil, err
	}
	k.Token = token
	return k, nil
}

// RevokeAPIKey revokes a key immediately and irreversibly; revoking twice is a 409.
func RevokeAPIKey(tx *db.Tx, id, by, reason string) (*domain.APIKey, error) {
	k, err := tx.RevokeAPIKey(id, by, reason)
	if errors.Is(err, db.ErrConflict) {
		return nil, domain.Conflict(domain.CodeAlreadyRevoked, "API key %s was already revoked.", id)
	}
	return k, notFound(err, "id", "api key", id)
}

// BootstrapOrgName is the name of the organization the first start creates (buyers see it on the
// hosted pages until `troco org update … --display-name` or the API changes it).
const BootstrapOrgName = "Minha Loja"

// Bootstrap creates the first organization and its test key on an empty database. With a
// sandboxKey it registers that token (for an existing database too, if not yet registered).
// It returns the created key (nil when nothing was created).
func Bootstrap(tx *db.Tx, sandboxKey string) (*domain.Organization, *domain.APIKey, error) {
	n, err := tx.CountOrganizations()
	if err != nil {
		return nil, nil, err
	}
	if n > 0 {
		org, err := tx.FirstOrganization()
		if err != nil || sandboxKey == "" {
			return org, nil, err
		}
		if _, err := tx.FindAPIKeyByHash(domain.HashToken(sandboxKey)); err == nil {
			return org, nil, nil
		} else if !errors.Is(err, db.ErrNotFound) {
			return nil, nil, err
		}
		k, err := CreateAPIKey(tx, APIKeyInput{OrgID: org.ID, Livemode: false, Name: "Sandbox key (--sandbox-key)", Token: sandboxKey})
		return org, k, err
	}
	org, err := CreateOrganization(tx, OrganizationInput{Name: BootstrapOrgName})
	if err != nil {
		return nil, nil, err
	}
	name := "Bootstrap test key"
	if sandboxKey != "" {
		name = "Sandbox key (--sandbox-key)"
	}
	k, err := CreateAPIKey(tx, APIKeyInput{OrgID: org.ID, Livemode: false, Scopes: []string{domain.ScopeRead, domain.ScopeWrite}, Name: name, Token: sandboxKey})
	return org, k, err
}
