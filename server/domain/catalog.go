package domain

import (
	"fmt"
	"net/url"
	"strings"
	"unicode/utf8"
)

// Customer is a buyer of an organization.
type Customer struct {
	ID           string   `json:"id"`
	Object       string   `json:"object"`
	CreatedAt    Time     `json:"created_at"`
	UpdatedAt    Time     `json:"updated_at"`
	Livemode     bool     `json:"livemode"`
	Email        *string  `json:"email"`
	Name         *string  `json:"name"`
	Phone        *string  `json:"phone"`
	Description  *string  `json:"description"`
	Document     *string  `json:"document"`
	DocumentType *string  `json:"document_type"`
	Address      *Address `json:"address"`
	Metadata     Metadata `json:"metadata"`
	// PreferredLocales orders the languages of the customer's e-mails and hosted pages
	// (pt-BR, the default, or en).
	PreferredLocales []string `json:"preferred_locales"`
	// Timezone is the IANA zone that e-mails and hosted invoice pages show dates in; null means
	// America/Sao_Paulo.
	Timezone *string `json:"timezone"`
}

// Product is something an organization sells; lists embed its prices (SPEC 2.6).
type Product struct {
	ID              string   `json:"id"`
	Object          string   `json:"object"`
	CreatedAt       Time     `json:"created_at"`
	DefaultPrice    *string  `json:"default_price"`
	Description     *string  `json:"description"`
	ImageURL        *string  `json:"image_url"`
	IsActive        bool     `json:"is_active"`
	IsTaxApplicable bool     `json:"is_tax_applicable"`
	Livemode        bool     `json:"livemode"`
	Metadata        Metadata `json:"metadata"`
	Name            string   `json:"name"`
	Prices          []Price  `json:"prices"`
	UpdatedAt       Time     `json:"updated_at"`
}

// Price types.
const (
	PriceOneTime   = "one_time"
	PriceRecurring = "recurring"
)

// Price is an amount at which a product sells, once or on a recurring interval (SPEC 2.6).
type Price struct {
	ID          string     `json:"id"`
	Object      string     `json:"object"`
	CreatedAt   Time       `json:"created_at"`
	Currency    string     `json:"currency"`
	IsActive    bool       `json:"is_active"`
	Livemode    bool       `json:"livemode"`
	Metadata    Metadata   `json:"metadata"`
	Name        *string    `json:"name"`
	Product     string     `json:"product"`
	Recurring   *Recurring `json:"recurring"`
	TaxBehavior string     `json:"tax_behavior"`
	Type        string     `json:"type"`
	UnitAmount  int64      `json:"unit_amount"`
	UpdatedAt   Time       `json:"updated_at"`
}

// Recurring describes a subscription price's cycle.
type Recurring struct {
	Interval        string `json:"interval"`
	IntervalCount   int    `json:"interval_count"`
	TrialPeriodDays *int   `json:"trial_period_days"`
	UsageType       string `json:"usage_type"`
}

// Validate checks the recurring rules: interval day/week/month/year, at most one year in total,
// usage licensed or metered, trial 0..730 days.
func (r *Recurring) Validate(param string) error {
	limits := map[string]int{"day": 365, "week": 52, "month": 12, "year": 1}
	if r.Interval == "" {
		return Missing(param + "[interval]")
	}
	limit, ok := limits[r.Interval]
	if !ok {
		return Invalid(param+"[interval]", "interval must be one of day, week, month or year.")
	}
	if r.IntervalCount < 1 || r.IntervalCount > limit {
		return Invalid(param+"[interval_count]", "interval_count must be between 1 and %d for interval %s (at most one year).", limit, r.Interval)
	}
	if r.UsageType == "" {
		r.UsageType = "licensed"
	}
	if r.UsageType != "licensed" && r.UsageType != "metered" {
		return Invalid(param+"[usage_type]", "usage_type must be licensed or metered.")
	}
	if r.TrialPeriodDays != nil && (*r.TrialPeriodDays < 0 || *r.TrialPeriodDays > 730) {
		return Invalid(param+"[trial_period_days]", "trial_period_days must be between 0 and 730.")
	}
	return nil
}

// Tax behaviours a price may declare.
var TaxBehaviors = []string{"unspecified", "inclusive", "exclusive"}

// ValidateCurrency accepts only brl (lowercase ISO 4217), the currency troco settles.
func ValidateCurrency(param, c string) (string, error) {
	if c == "" {
		return "brl", nil
	}
	if c != "brl" {
		return "", Invalid(param, "currency must be brl (lowercase ISO 4217); got %q.", c)
	}
	return c, nil
}

// ValidateAmount checks a centavo amount within [min, 99999999999].
func ValidateAmount(param string, v, min int64) error {
	const maxAmount = 99_999_999_99
	if v < min || v > maxAmount {
		return Invalid(param, "%s must be an integer amount in centavos between %d and %d.", param, min, maxAmount)
	}
	return nil
}

// ValidateURL checks an http(s) URL of at most maxLen characters.
func ValidateURL(param, raw string, maxLen int) error {
	if len(raw) > maxLen {
		return Invalid(param, "%s must be at most %d characters.", param, maxLen)
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || !(strings.HasPrefix(raw, "http://") || strings.HasPrefix(raw, "https://")) {
		return Invalid(param, "%s must be an absolute URL starting with http:// or https://.", param)
	}
	return nil
}

// ValidateText checks a free text field's length (in characters).
func ValidateText(param, v string, maxLen int) error {
	if len([]rune(v)) > maxLen {
		return Invalid(param, "%s must be at most %d characters.", param, maxLen)
	}
	return ValidateTextRunes(param, v)
}

// ValidateTextRunes refuses text that is not UTF-8 or holds a character of ForbiddenTextRune,
// whichever interface it came from (the command line and the pages as well as the API).
func ValidateTextRunes(param, v string) error {
	if !utf8.ValidString(v) {
		return Invalid(param, "%s is not valid UTF-8 text.", param)
	}
	if e := ForbiddenTextError(param, param, v); e != nil {
		return e
	}
	return nil
}

// MaxPhoneLen is the longest phone number a buyer may type (characters).
const MaxPhoneLen = 32

// ValidatePhone checks a phone number a buyer typed (already trimmed): digits and + ( ) - . or
// spaces, 10 to 15 digits (the area code included).
func ValidatePhone(param, p string) error {
	if len(p) > MaxPhoneLen {
		return Invalid(param, "%s must be at most %d characters.", param, MaxPhoneLen)
	}
	digits := 0
	for _, r := range p {
		switch {
		case r >= '0' && r <= '9':
			digits++
		case strings.ContainsRune("+()- .", r):
		default:
			return Invalid(param, "%s may contain only digits, spaces and + ( ) - .", param)
		}
	}
	if digits < 10 || digits > 15 {
		return Invalid(param, "%s must have 10 to 15 digits (area code included), e.g. +55 11 91234-5678.", param)
	}
	return nil
}

// ValidateEmail performs a structural check on an e-mail address.
func ValidateEmail(param, v string) error {
	at := strings.LastIndexByte(v, '@')
	if at < 1 || at == len(v)-1 || len(v) > 254 || strings.ContainsAny(v, " \t\r\n<>,;") || !strings.Contains(v[at+1:], ".") {
		return Invalid(param, "%s must be a valid e-mail address.", param)
	}
	return nil
}

// Event is a change notification (SPEC 2.8).
type Event struct {
	ID           string       `json:"id"`
	Object       string       `json:"object"`
	CreatedAt    Time         `json:"created_at"`
	Data         EventData    `json:"data"`
	Livemode     bool         `json:"livemode"`
	Organization string       `json:"organization"`
	Request      EventRequest `json:"request"`
	Type         string       `json:"type"`
}

// EventData carries the object and, on changes, the previous values of changed fields.
type EventData struct {
	Object             any            `json:"object"`
	PreviousAttributes map[string]any `json:"previous_attributes,omitempty"`
}

// EventRequest names the API request that caused an event, when one did.
type EventRequest struct {
	ID *string `json:"id"`
}

// Stringer-free helper for messages.
func quote(s string) string { return fmt.Sprintf("%q", s) }

var _ = quote
