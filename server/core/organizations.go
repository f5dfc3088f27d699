package core

import (
	"troco/db"
	"troco/server/domain"
	"troco/server/fees"
)

// GetOrganization returns an organization the actor may see: its own, or for a platform key, the
// platform itself and its connected organizations. Anything else is a 404.
func GetOrganization(tx *db.Tx, a domain.Actor, id string) (*domain.Organization, error) {
	o, err := tx.FindOrganizationByID(id)
	if err != nil {
		return nil, notFound(err, "id", "organization", id)
	}
	if o.ID != a.OrgID {
		self, err := tx.FindOrganizationByID(a.OrgID)
		if err != nil {
			return nil, err
		}
		if self.Platform == nil || o.ConnectedPlatform == nil || *o.ConnectedPlatform != *self.Platform {
			return nil, domain.NotFound("id", "organization", id)
		}
	}
	o.Livemode = a.Livemode
	if o.FeePlan == nil {
		o.FeePlan = DefaultFeePlan()
	}
	return o, nil
}

// FeePlan is the public shape of an organization's fee plan (CONTRACT 5).
type FeePlan struct {
	CardFeeRate             int64 `json:"card_fee_rate"`
	CardFeeAmount           int64 `json:"card_fee_amount"`
	PixFeeAmount            int64 `json:"pix_fee_amount"`
	BoletoFeeAmount         int64 `json:"boleto_fee_amount"`
	InstallmentInterestRate int64 `json:"installment_interest_rate"`
}

// DefaultFeePlan is the plan of every organization without its own (both modes).
func DefaultFeePlan() FeePlan {
	p := fees.DefaultPlan
	return FeePlan{CardFeeRate: p.CardFeeRate, CardFeeAmount: p.CardFixedFee, PixFeeAmount: p.PixFee, BoletoFeeAmount: p.BoletoFee, InstallmentInterestRate: fees.DefaultInstallmentInterestRate}
}
