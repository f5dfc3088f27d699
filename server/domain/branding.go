package domain

import (
	"regexp"
	"slices"
	"strings"
)

// CheckoutSettings are an organization's defaults for its hosted checkout pages (SPEC 2.4: a
// session's branding override inherits its null fields from the organization; a null session
// template means the organization's default).
type CheckoutSettings struct {
	Branding Branding `json:"branding"`
	Template *string  `json:"template"`
}

var hexColor = regexp.MustCompile(`^#[0-9A-Fa-f]{6}$`)

// ValidateBranding checks a branding object (a session's override or an organization's
// defaults) named param; its null fields stay null.
func ValidateBranding(param string, b *Branding) error {
	if b == nil {
		return nil
	}
	if v := b.DisplayName; v != nil {
		if strings.TrimSpace(*v) == "" {
			return Invalid(param+"[display_name]", "%s[display_name] cannot be empty; send null to inherit the organization's name.", param)
		}
		if err := ValidateText(param+"[display_name]", *v, 100); err != nil {
			return err
		}
	}
	if v := b.LogoURL; v != nil {
		if err := ValidateURL(param+"[logo_url]", *v, 2048); err != nil {
			return err
		}
		if !strings.HasPrefix(*v, "https://") {
			return Invalid(param+"[logo_url]", "%s[logo_url] must be an https:// URL (the hosted page is served over HTTPS).", param)
		}
	}
	for _, c := range []struct {
		name string
		v    *string
	}{{"primary_color", b.PrimaryColor}, {"background_color", b.BackgroundColor}} {
		if c.v != nil && !hexColor.MatchString(*c.v) {
			return Invalid(param+"["+c.name+"]", "%s[%s] must be a hex colour such as #0A7C55.", param, c.name)
		}
	}
	if v := b.BorderStyle; v != nil && !slices.Contains(BorderStyles, *v) {
		return Invalid(param+"[border_style]", "%s[border_style] must be rounded, rectangular or pill.", param)
	}
	return nil
}
