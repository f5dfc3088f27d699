package db

import (
	"database/sql"
	"encoding/json"
	"strings"

	"troco/server/domain"
)

const orgCols = `id, name, document, document_type, email, phone, address, activation_status, disabled_reason,
requirements_missing, payout_account, fee_plan, timezone, max_installments, platform_id, split_rules,
connected_platform_id, activation_attempts, metadata, created_at, updated_at, display_name, ` + orgBrandingCol + `, ` + orgEmailSettingsCol

// orgEmailSettingsCol reads the kinds of customer e-mail the organization sends.
const orgEmailSettingsCol = `(SELECT e.data FROM organization_email_settings e WHERE e.org_id = organizations.id)`

// orgBrandingCol reads the hosted checkout defaults (organization_branding) with the organization.
const orgBrandingCol = `(SELECT b.data FROM organization_branding b WHERE b.org_id = organizations.id)`

func scanOrg(s scanner) (*domain.Organization, error) {
	var o domain.Organization
	var address, payout, feePlan, split, branding, emailSettings *string
	var missing, metadata string
	var created, updated int64
	err := s.Scan(&o.ID, &o.Name, &o.Document, &o.DocumentType, &o.Email, &o.Phone, &address, &o.ActivationStatus,
		&o.Requirements.DisabledReason, &missing, &payout, &feePlan, &o.DashboardSettings.Timezone, &o.MaxInstallments,
		&o.Platform, &split, &o.ConnectedPlatform, &o.ActivationAttempts, &metadata, &created, &updated, &o.DisplayName, &branding, &emailSettings)
	if err != nil {
		return nil, err
	}
	if branding != nil {
		var v struct {
			domain.Branding
			Template *string `json:"template"`
		}
		if json.Unmarshal([]byte(*branding), &v) == nil {
			o.CheckoutSettings = domain.CheckoutSettings{Branding: v.Branding, Template: v.Template}
			if v.Template != nil && *v.Template == "" {
				o.CheckoutSettings.Template = nil
			}
		}
	}
	o.Object = "organization"
	o.EmailSettings = domain.EmailSettings{}
	if emailSettings != nil {
		_ = json.Unmarshal([]byte(*emailSettings), &o.EmailSettings)
	}
	o.EmailSettings = o.EmailSettings.Complete()
	o.Address = parseAddress(address)
	o.Requirements.Missing = []string{}
	_ = json.Unmarshal([]byte(missing), &o.Requirements.Missing)
	if payout != nil {
		o.PayoutAccount = json.RawMessage(*payout)
	}
	if feePlan != nil {
		o.FeePlan = json.RawMessage(*feePlan)
	}
	o.SplitRulesConfigured = split != nil
	o.Metadata = parseMetadata(metadata)
	o.CreatedAt, o.UpdatedAt = domain.Unix(created), domain.Unix(updated)
	return &o, nil
}

// CreateOrganization inserts o, assigning its id (and platform id when platform is true).
func (tx *Tx) CreateOrganization(o *domain.Organization, platform bool) error {
	o.ID = domain.NewID(domain.PrefixOrganization)
	o.Object = "organization"
	if platform {
		p := domain.NewID(domain.PrefixPlatform)
		o.Platform = &p
	}
	if o.ActivationStatus == "" {
		o.ActivationStatus = domain.ActivationNotSubmitted
	}
	if o.DashboardSettings.Timezone == "" {
		o.DashboardSettings.Timezone = "America/Sao_Paulo"
	}
	if o.MaxInstallments == 0 {
		o.MaxInstallments = 12
	}
	if o.Requirements.Missing == nil {
		o.Requirements.Missing = []string{}
	}
	if o.Metadata == nil {
		o.Metadata = domain.Metadata{}
	}
	o.CreatedAt, o.UpdatedAt = domain.At(tx.Now), domain.At(tx.Now)
	missing, _ := json.Marshal(o.Requirements.Missing)
	// Both environments start in the same activation state (an administrator's choice).
	_, err := tx.exec(`INSERT INTO organizations (id, name, document, document_type, email, phone, address, activation_status,
		disabled_reason, requirements_missing, test_activation_status, test_disabled_reason, test_requirements_missing,
		fee_plan, timezone, max_installments, platform_id, connected_platform_id, metadata, created_at, updated_at, display_name)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		o.ID, o.Name, o.Document, o.DocumentType, o.Email, o.Phone, addressJSON(o.Address), o.ActivationStatus,
		o.Requirements.DisabledReason, string(missing), o.ActivationStatus, o.Requirements.DisabledReason, string(missing),
		feePlanJSON(o.FeePlan), o.DashboardSettings.Timezone, o.MaxInstallments, o.Platform,
		o.ConnectedPlatform, metadataJSON(o.Metadata), tx.now(), tx.now(), o.DisplayName)
	return translate(err, "create organization")
}

// FindOrganizationByID returns the organization with id (org_…).
func (tx *Tx) FindOrganizationByID(id string) (*domain.Organization, error) {
	o, err := scanOrg(tx.queryRow("SELECT "+orgCols+" FROM organizations WHERE id = ?", id))
	return o, translate(err, "find organization")
}

// FindOrganizationByPlatformID returns the organization that is platform plat_….
func (tx *Tx) FindOrganizationByPlatformID(platformID string) (*domain.Organization, error) {
	o, err := scanOrg(tx.queryRow("SELECT "+orgCols+" FROM organizations WHERE platform_id = ?", platformID))
	return o, translate(err, "find platform")
}

// FirstOrganization returns the oldest organization (the bootstrap one), or ErrNotFound.
func (tx *Tx) FirstOrganization() (*domain.Organization, error) {
	o, err := scanOrg(tx.queryRow("SELECT " + orgCols + " FROM organizations ORDER BY seq LIMIT 1"))
	return o, translate(err, "find first organization")
}

// ConfigureSplitRules records a platform's split rules (raw JSON object).
func (tx *Tx) ConfigureSplitRules(platformID, rules string) error {
	res, err := tx.exec("UPDATE organizations SET split_rules = ?, updated_at = ? WHERE platform_id = ?", rules, tx.now(), platformID)
	if err != nil {
		return translate(err, "configure split rules")
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrNotFound
	}
	return nil
}

// SetOrganizationActivationStatus moves an organization to status in both environments
// (administration and tests).
func (tx *Tx) SetOrganizationActivationStatus(id, status string) error {
	res, err := tx.exec("UPDATE organizations SET activation_status = ?, test_activation_status = ?, updated_at = ? WHERE id = ?", status, status, tx.now(), id)
	if err != nil {
		return translate(err, "set activation status")
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrNotFound
	}
	return nil
}

// CountOrganizations returns how many organizations exist.
func (tx *Tx) CountOrganizations() (int, error) {
	var n int
	err := tx.queryRow("SELECT COUNT(*) FROM organizations").Scan(&n)
	return n, translate(err, "count organizations")
}

// SettingPublicBaseURL is the setting that holds the public base URL of everything troco links
// to from outside a request (hosted invoice pages, e-mails): serve's --base-url, or the listen
// address a server without one learned from its first request.
const SettingPublicBaseURL = "public_base_url"

// GetSetting reads a named setting; ok is false when absent.
func (tx *Tx) GetSetting(name string) (value string, ok bool, err error) {
	err = tx.queryRow("SELECT value FROM settings WHERE name = ?", name).Scan(&value)
	if err == sql.ErrNoRows {
		return "", false, nil
	}
	return value, err == nil, translate(err, "get setting")
}

// PutSetting writes a named setting.
func (tx *Tx) PutSetting(name, value string) error {
	_, err := tx.exec("INSERT INTO settings (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value", name, value)
	return translate(err, "put setting")
}

// DeleteSetting removes a named setting (absent is fine).
func (tx *Tx) DeleteSetting(name string) error {
	_, err := tx.exec("DELETE FROM settings WHERE name = ?", name)
	return translate(err, "delete setting")
}

func splitScopes(s string) []string {
	if s == "" {
		return []string{}
	}
	return strings.Split(s, ",")
}

// orgColsTest is orgCols with the sandbox activation state in place of the live one.
const orgColsTest = `id, name, document, document_type, email, phone, address, test_activation_status, test_disabled_reason,
test_requirements_missing, test_payout_account, fee_plan, timezone, max_installments, platform_id, split_rules,
connected_platform_id, test_activation_attempts, metadata, created_at, updated_at, display_name, ` + orgBrandingCol + `, ` + orgEmailSettingsCol

func orgColsFor(livemode bool) string {
	if livemode {
		return orgCols
	}
	return orgColsTest
}

// FindOrganizationInMode returns the organization with id, its activation state (status,
// requirements, payout account, attempts) read from the environment livemode, and Livemode set.
// The rest of the record is shared by both environments (SPEC 8.6).
func (tx *Tx) FindOrganizationInMode(id string, livemode bool) (*domain.Organization, error) {
	o, err := scanOrg(tx.queryRow("SELECT "+orgColsFor(livemode)+" FROM organizations WHERE id = ?", id))
	if err != nil {
		return nil, translate(err, "find organization")
	}
	o.Livemode = livemode
	return o, nil
}

// OrganizationFilter narrows ListConnectedOrganizations.
type OrganizationFilter struct {
	ActivationStatus string
}

// ListConnectedOrganizations pages the organizations connected to platform plat_…, newest first,
// with their activation state in the environment livemode.
func (tx *Tx) ListConnectedOrganizations(platformID string, livemode bool, f OrganizationFilter, p ListParams) ([]*domain.Organization, bool, error) {
	var w filter
	w.add("connected_platform_id = ?", platformID)
	if f.ActivationStatus != "" {
		if livemode {
			w.add("activation_status = ?", f.ActivationStatus)
		} else {
			w.add("test_activation_status = ?", f.ActivationStatus)
		}
	}
	return page(tx, "organizations", orgColsFor(livemode), w, p, func(s scanner) (*domain.Organization, error) {
		o, err := scanOrg(s)
		if err == nil {
			o.Livemode = livemode
		}
		return o, err
	})
}

// UpdateOrganization writes the fields shared by both environments: name, document, contact,
// address, fee plan (a json.RawMessage, or nil for the default plan), timezone, instalment
// ceiling and metadata.
func (tx *Tx) UpdateOrganization(o *domain.Organization) error {
	o.UpdatedAt = domain.At(tx.Now)
	res, err := tx.exec(`UPDATE organizations SET name = ?, document = ?, document_type = ?, email = ?, phone = ?, address = ?,
		fee_plan = ?, timezone = ?, max_installments = ?, metadata = ?, display_name = ?, updated_at = ? WHERE id = ?`,
		o.Name, o.Document, o.DocumentType, o.Email, o.Phone, addressJSON(o.Address), feePlanJSON(o.FeePlan),
		o.DashboardSettings.Timezone, o.MaxInstallments, metadataJSON(o.Metadata), o.DisplayName, tx.now(), o.ID)
	if err != nil {
		return translate(err, "update organization")
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrNotFound
	}
	return nil
}

// SetActivationState writes an organization's activation state in the environment livemode.
func (tx *Tx) SetActivationState(orgID string, livemode bool, st domain.ActivationState) error {
	if st.Missing == nil {
		st.Missing = []string{}
	}
	missing, _ := json.Marshal(st.Missing)
	payout := feePlanJSON(st.PayoutAccount)
	q := `UPDATE organizations SET activation_status = ?, disabled_reason = ?, requirements_missing = ?, payout_account = ?,
		activation_attempts = ?, updated_at = ? WHERE id = ?`
	if !livemode {
		q = `UPDATE organizations SET test_activation_status = ?, test_disabled_reason = ?, test_requirements_missing = ?,
		test_payout_account = ?, test_activation_attempts = ?, updated_at = ? WHERE id = ?`
	}
	res, err := tx.exec(q, st.Status, st.DisabledReason, string(missing), payout, st.Attempts, tx.now(), orgID)
	if err != nil {
		return translate(err, "set activation state")
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrNotFound
	}
	return nil
}

// FindActivationProfile returns the hosted-form data saved for an organization (empty when none).
func (tx *Tx) FindActivationProfile(orgID string) (domain.ActivationProfile, error) {
	var raw string
	var p domain.ActivationProfile
	if err := tx.queryRow("SELECT activation_profile FROM organizations WHERE id = ?", orgID).Scan(&raw); err != nil {
		return p, translate(err, "find activation profile")
	}
	_ = json.Unmarshal([]byte(raw), &p)
	return p, nil
}

// SaveActivationProfile stores the hosted-form data of an organization.
func (tx *Tx) SaveActivationProfile(orgID string, p domain.ActivationProfile) error {
	raw, err := marshalJSON(p)
	if err != nil {
		return err
	}
	_, err = tx.exec("UPDATE organizations SET activation_profile = ? WHERE id = ?", raw, orgID)
	return translate(err, "save activation profile")
}

// DocumentActivatedElsewhere reports whether another organization with the same document is
// active or in review in live mode (the document is already in use for an activation).
func (tx *Tx) DocumentActivatedElsewhere(document, exceptOrgID string) (bool, error) {
	var n int
	err := tx.queryRow(`SELECT COUNT(*) FROM organizations WHERE document = ? AND id <> ? AND activation_status IN ('active', 'in_review')`,
		document, exceptOrgID).Scan(&n)
	return n > 0, translate(err, "find document in use")
}

// feePlanJSON stores a JSON document column (an organization's own fee plan, its payout
// account); nil (the default plan, no account) is NULL.
func feePlanJSON(v any) any {
	switch p := v.(type) {
	case nil:
		return nil
	case json.RawMessage:
		if len(p) == 0 || string(p) == "null" {
			return nil
		}
		return string(p)
	default:
		b, err := json.Marshal(p)
		if err != nil || string(b) == "null" {
			return nil
		}
		return string(b)
	}
}
