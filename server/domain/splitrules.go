package domain

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// SplitRule is the platform's share of a payment of one of its connected organizations: Rate in
// basis points of the amount (0–10000; 150 is 1.5 %) plus Fixed centavos.
type SplitRule struct {
	Rate  *int64 `json:"rate"`
	Fixed int64  `json:"fixed,omitempty"`
}

// SplitRules are a platform's split rules: a default and optional overrides per payment method.
type SplitRules struct {
	Default    *SplitRule `json:"default"`
	CreditCard *SplitRule `json:"credit_card,omitempty"`
	Pix        *SplitRule `json:"pix,omitempty"`
	Boleto     *SplitRule `json:"boleto,omitempty"`
}

// SplitRulesFormat describes the accepted format in the words every refusal uses.
const SplitRulesFormat = `a JSON object {"default":{"rate":R,"fixed":F}} with optional "credit_card", "pix" and "boleto" ` +
	`objects of the same shape that override the default for that method; rate is the platform's share in basis ` +
	`points (0 to 10000; 150 = 1.5 %), fixed an optional amount in centavos (0 or more)`

// ParseSplitRules checks raw against SplitRulesFormat and returns the rules re-encoded compactly.
func ParseSplitRules(raw string) (*SplitRules, string, error) {
	refuse := func(format string, a ...any) (*SplitRules, string, error) {
		return nil, "", fmt.Errorf("--split-rules: %s; expected %s", fmt.Sprintf(format, a...), SplitRulesFormat)
	}
	dec := json.NewDecoder(bytes.NewReader([]byte(raw)))
	dec.DisallowUnknownFields()
	var r *SplitRules
	if err := dec.Decode(&r); err != nil {
		return refuse("%v", err)
	}
	if dec.More() {
		return refuse("unexpected data after the JSON object")
	}
	if r == nil {
		return refuse("null is not an object")
	}
	if r.Default == nil {
		return refuse(`"default" is required`)
	}
	for _, m := range []struct {
		name string
		r    *SplitRule
	}{{"default", r.Default}, {"credit_card", r.CreditCard}, {"pix", r.Pix}, {"boleto", r.Boleto}} {
		if m.r == nil {
			continue
		}
		if m.r.Rate == nil {
			return refuse(`"%s" needs "rate"`, m.name)
		}
		if *m.r.Rate < 0 || *m.r.Rate > 10000 {
			return refuse(`"%s".rate %d is out of range`, m.name, *m.r.Rate)
		}
		if m.r.Fixed < 0 {
			return refuse(`"%s".fixed %d is negative`, m.name, m.r.Fixed)
		}
	}
	out, _ := json.Marshal(r)
	return r, string(out), nil
}
