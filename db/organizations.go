package db

import (
	"database/sql"
	"encoding/json"
	"strings"

	"troco/server/domain"
)

const orgCols = `id, name, document, document_type, email, phone, address, activation_status, disabled_reason,
requirements_missing, payout_account, fee_plan, timezone, max_installments, platform_id, split_rules,
connected_platform_id, activation_attempts, metadata, created_at, updated_at`

func scanOrg(s scanner) (*domain.Organization, error) {
	var o domain.Organization
	var address, payout, feePlan, split *string
	var missing, metadata string
	var created, updated int64
	err := s.Scan(&o.ID, &o.Name, &o.Document, &o.DocumentType, &o.Email, &o.Phone, &address, &o.ActivationStatus,
		&o.Requirements.DisabledReason, &missing, &payout, &feePlan, &o.DashboardSettings.Timezone, &o.MaxInstallments,
		&o.Platform, &split, &o.ConnectedPlatform, &o.ActivationAttempts, &metadata, &created, &updated)
	if err != nil {
		return nil, err
	}
	o.Object = "organization"
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
	_, err := tx.exec(`INSERT INTO organizations (id, name, document, document_type, email, phone, address, activation_status,
		disabled_reason, requirements_missing, timezone, max_installments, platform_id, connected_platform_id, metadata, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		o.ID, o.Name, o.Document, o.DocumentType, o.Email, o.Phone, addressJSON(o.Address), o.ActivationStatus,
		o.Requirements.DisabledReason, string(missing), o.DashboardSettings.Timezone, o.MaxInstallments, o.Platform,
		o.ConnectedPlatform, metadataJSON(o.Metadata), tx.now(), tx.now())
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

// SetOrganizationActivationStatus moves an organization to status (administration and tests).
func (tx *Tx) SetOrganizationActivationStatus(id, status string) error {
	res, err := tx.exec("UPDATE organizations SET activation_status = ?, updated_at = ? WHERE id = ?", status, tx.now(), id)
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

func splitScopes(s string) []string {
	if s == "" {
		return []string{}
	}
	return strings.Split(s, ",")
}
