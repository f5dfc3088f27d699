package core

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"

	"troco/db"
	"troco/server/activation"
	"troco/server/document"
	"troco/server/domain"
)

// SandboxUnsupported is the answer of the payout-account resource to a test key (SPEC 4.9).
func SandboxUnsupported() *domain.Error {
	return domain.Conflict(domain.CodeSandboxUnsupported, "Payout accounts exist only in live mode; use a live key (ch_live_...).")
}

// PayoutAccountParams is the body of POST /v1/payout-accounts.
type PayoutAccountParams struct {
	BankCode       *string           `json:"bank_code"`
	Branch         *string           `json:"branch"`
	AccountNumber  *string           `json:"account_number"`
	AccountType    *string           `json:"account_type"`
	HolderName     *string           `json:"holder_name"`
	HolderDocument *string           `json:"holder_document"`
	Metadata       map[string]string `json:"metadata"`
}

// CreatePayoutAccount connects a bank account of the actor's organization (live only). The new
// account becomes the organization's payout_account, which emits organization.updated.
func CreatePayoutAccount(tx *db.Tx, a domain.Actor, p PayoutAccountParams) (*domain.PayoutAccount, error) {
	if !a.Livemode {
		return nil, SandboxUnsupported()
	}
	for _, f := range []struct {
		name string
		v    *string
	}{{"bank_code", p.BankCode}, {"branch", p.Branch}, {"account_number", p.AccountNumber}} {
		if f.v == nil || strings.TrimSpace(*f.v) == "" {
			return nil, domain.Missing(f.name)
		}
	}
	pa := &domain.PayoutAccount{BankCode: strings.TrimSpace(*p.BankCode), Branch: strings.TrimSpace(*p.Branch),
		AccountNumber: strings.TrimSpace(*p.AccountNumber), AccountType: "checking", Metadata: domain.Metadata{}}
	if !activation.ValidBankCode(pa.BankCode) {
		return nil, domain.Invalid("bank_code", "bank_code must be the 3-digit COMPE code of the bank, such as 001.")
	}
	if !activation.ValidBranch(pa.Branch) {
		return nil, domain.Invalid("branch", "branch must be up to 5 digits with an optional check digit after a hyphen, such as 0001-9.")
	}
	if !activation.ValidAccountNumber(pa.AccountNumber) {
		return nil, domain.Invalid("account_number", "account_number must be up to 12 digits and a check digit, such as 12345-6.")
	}
	pa.Branch, pa.AccountNumber = activation.NormalizeBranch(pa.Branch), activation.NormalizeAccount(pa.AccountNumber)
	if p.AccountType != nil {
		if !slices.Contains(domain.PayoutAccountTypes, *p.AccountType) {
			return nil, domain.Invalid("account_type", "account_type must be checking, savings or payment.")
		}
		pa.AccountType = *p.AccountType
	}
	if err := domain.ValidateMetadata(p.Metadata); err != nil {
		return nil, err
	}
	for k, v := range p.Metadata {
		pa.Metadata[k] = v
	}
	org, err := tx.FindOrganizationInMode(a.OrgID, true)
	if err != nil {
		return nil, err
	}
	pa.HolderName = org.Name
	if p.HolderName != nil {
		if err := domain.ValidateText("holder_name", *p.HolderName, 200); err != nil {
			return nil, err
		}
		if n := strings.TrimSpace(*p.HolderName); n != "" {
			pa.HolderName = n
		}
	}
	switch {
	case p.HolderDocument != nil:
		doc, err := document.Parse(*p.HolderDocument)
		if err != nil {
			return nil, domain.Invalid("holder_document", "holder_document must be a valid CPF or CNPJ.")
		}
		if org.Document != nil && doc.Number != *org.Document {
			return nil, domain.Invalid("holder_document", "The payout account must belong to the organization's own document.")
		}
		pa.HolderDocument = doc.Number
	case org.Document != nil:
		pa.HolderDocument = *org.Document
	default:
		return nil, documentRequired()
	}
	if err := tx.CreatePayoutAccount(a.Scope, pa); err != nil {
		return nil, err
	}
	return pa, setPayoutAccount(tx, a, org, pa)
}

// setPayoutAccount makes pa (or none) the organization's live payout_account.
func setPayoutAccount(tx *db.Tx, a domain.Actor, org *domain.Organization, pa *domain.PayoutAccount) error {
	before := organizationView(org)
	st := activationStateOf(org)
	st.PayoutAccount = nil
	if pa != nil {
		st.PayoutAccount = pa
	}
	if err := tx.SetActivationState(org.ID, true, st); err != nil {
		return err
	}
	after, err := tx.FindOrganizationInMode(org.ID, true)
	if err != nil {
		return err
	}
	return emitOrganizationUpdated(tx, a.RequestID, before, organizationView(after))
}

// GetPayoutAccount returns a payout account of the actor's organization (live only).
func GetPayoutAccount(tx *db.Tx, a domain.Actor, id string) (*domain.PayoutAccount, error) {
	if !a.Livemode {
		return nil, SandboxUnsupported()
	}
	pa, err := tx.FindPayoutAccount(a.Scope, id)
	return pa, notFound(err, "id", "payout account", id)
}

// ListPayoutAccounts pages the payout accounts of the actor's organization (live only).
func ListPayoutAccounts(tx *db.Tx, a domain.Actor, f db.PayoutAccountFilter, p db.ListParams) ([]*domain.PayoutAccount, bool, error) {
	if !a.Livemode {
		return nil, false, SandboxUnsupported()
	}
	switch f.Status {
	case "", domain.PayoutAccountConnected, domain.PayoutAccountDisconnected:
	default:
		return nil, false, domain.Invalid("status", "status must be connected or disconnected.")
	}
	return tx.ListPayoutAccounts(a.Scope, f, p)
}

// DisconnectPayoutAccount stops payouts to an account (live only); disconnecting twice is a 409.
// When it was the organization's payout_account, the newest other connected account (or none)
// takes its place.
func DisconnectPayoutAccount(tx *db.Tx, a domain.Actor, id string) (*domain.PayoutAccount, error) {
	if !a.Livemode {
		return nil, SandboxUnsupported()
	}
	err := tx.DisconnectPayoutAccount(a.Scope, id)
	if errors.Is(err, db.ErrConflict) {
		return nil, domain.Conflict(domain.CodeResourceStateConflict, "Payout account %s is already disconnected.", id)
	}
	if err != nil {
		return nil, notFound(err, "id", "payout account", id)
	}
	pa, err := tx.FindPayoutAccount(a.Scope, id)
	if err != nil {
		return nil, err
	}
	org, err := tx.FindOrganizationInMode(a.OrgID, true)
	if err != nil {
		return nil, err
	}
	var current struct {
		ID string `json:"id"`
	}
	if raw, ok := org.PayoutAccount.(json.RawMessage); ok {
		_ = json.Unmarshal(raw, &current)
	}
	if current.ID != id {
		return pa, nil
	}
	next, err := tx.LatestConnectedPayoutAccount(a.Scope)
	if errors.Is(err, db.ErrNotFound) {
		next, err = nil, nil
	}
	if err != nil {
		return nil, err
	}
	return pa, setPayoutAccount(tx, a, org, next)
}
