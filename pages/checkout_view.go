package pages

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Hosted checkout page states: which screen a session shows.
const (
	StateOpen          = "open"
	StateWaitingPix    = "waiting_pix"
	StateWaitingBoleto = "waiting_boleto"
	StateProcessing    = "processing"
	StateSuccess       = "success"
	StateFailed        = "failed"
	StateExpired       = "expired"
	StateCanceled      = "canceled"
	StateUnavailable   = "unavailable"
	StateNotFound      = "not_found"
	StateForbidden     = "forbidden"
	// StateTryAgain: the page could not be loaded now (the database restarting); nothing changed.
	StateTryAgain = "try_again"
	// StateNotActive is a live session whose organization cannot take payments yet.
	StateNotActive = "not_active"
)

// Brand is the merged look of a page: the session's branding override over the organization's
// defaults over troco's.
type Brand struct {
	Name            string
	LogoURL         string
	PrimaryColor    string // #RRGGBB, validated
	BackgroundColor string // #RRGGBB, validated
	BorderStyle     string // rounded, rectangular, pill
}

// Item is one line of the order summary.
type Item struct {
	Name        string
	Description string
	ImageURL    string
	Quantity    int64
	UnitAmount  int64
	Amount      int64
	// Recurring is "por mês"-style text for a recurring price, empty otherwise.
	Recurring string
	// RecurringAmount is what the price bills each cycle (unit × quantity).
	RecurringAmount int64
	TrialDays       int
}

// InstallmentOption is one choice of the instalment selector.
type InstallmentOption struct {
	Count             int
	InstallmentAmount int64
	TotalAmount       int64
	InterestAmount    int64
}

// FormValues are the buyer's entries kept across a failed submission (never the card number or CVC).
type FormValues struct {
	Method, Email, Name, Document, Phone                                  string
	Line1, Number, Line2, Neighborhood, City, State, PostalCode, CardName string
	Installments                                                          int
	SaveCard                                                              bool
}

// PageError is a message shown above the form; Field names the input it concerns, if any.
type PageError struct {
	Title   string
	Message string
	Field   string
}

// Pix is a waiting PIX payment.
type Pix struct {
	Code      string
	QRURL     string
	ExpiresAt string // RFC 3339, for the countdown script
	ExpiresIn int64  // seconds left when the page was rendered
	Expiry    string // human text
}

// Boleto is a waiting boleto payment.
type Boleto struct {
	Line       string // formatted linha digitável
	LineDigits string
	Barcode    string
	BarcodeSVG string // trusted SVG from package boleto
	DueDate    string // human text
	PrintURL   string
	// PixCode and PixQRURL are the PIX of the same charge (boleto híbrido); empty on boletos
	// issued before it existed.
	PixCode  string
	PixQRURL string
}

// CardPaid summarises a card payment on the success page.
type CardPaid struct {
	Brand        string
	Last4        string
	Installments int
}

// Checkout is everything the hosted checkout templates render. Amounts are centavos computed
// by the server; the page never sends one back.
type Checkout struct {
	Lang     Lang
	State    string
	Livemode bool
	// MailboxURL, in test mode, opens the organization's sandbox mailbox from the sandbox bar.
	MailboxURL string
	Brand      Brand
	Template   string // minimal or booking
	SessionID  string
	// Mode is payment or subscription; SubmitType one of SPEC 2.4's.
	Mode       string
	SubmitType string
	Items      []Item
	Subtotal   int64
	Discount   int64
	Tax        int64
	Total      int64
	// Methods offered, in order; Method is the one selected.
	Methods                 []string
	Installments            []InstallmentOption
	InterestPayerBuyer      bool
	BoletoDays              int
	RequireBillingAddress   bool
	RequireDocument         bool
	RequirePhone            bool
	PaymentMethodCollection string
	Form                    FormValues
	Error                   *PageError
	// Form plumbing: client secret, CSRF token bound to the browser, one-time attempt token.
	ClientSecret string
	CSRFToken    string
	Attempt      string
	LangParam    string
	// URLs of actions and links.
	PageURL     string
	ConfirmURL  string
	SimulateURL string
	StatusURL   string
	CancelURL   string
	SuccessURL  string
	AssetBase   string
	ExpiresAt   string
	Pix         *Pix
	Boleto      *Boleto
	Card        *CardPaid
	// PaidWith is the method of a successful PIX or boleto payment ("pix", "boleto").
	PaidWith      string
	CustomerEmail string
	// CSPNonce marks the inline style that carries the brand colours.
	CSPNonce string
	// AllowPromotionCodes shows the promotion-code form (open sessions); DiscountLabel names the
	// applied discount (the code, or the coupon's name); PromoURL is where the form posts;
	// PromoCode and PromoError are the buyer's refused entry and why.
	AllowPromotionCodes bool
	DiscountLabel       string
	PromoURL            string
	PromoCode           string
	PromoError          string
}

// Sandbox reports whether the yellow test bar shows (test mode only, SPEC 8.6).
func (c *Checkout) Sandbox() bool { return !c.Livemode }

// Waiting reports whether a PIX or boleto awaits payment (the test bar then offers simulations).
func (c *Checkout) Waiting() bool {
	return c.State == StateWaitingPix || c.State == StateWaitingBoleto
}

// Offers reports whether method is offered.
func (c *Checkout) Offers(method string) bool {
	for _, m := range c.Methods {
		if m == method {
			return true
		}
	}
	return false
}

// Selected is the method whose panel is open: the buyer's last choice, else the first offered.
func (c *Checkout) Selected() string {
	if c.Form.Method != "" && c.Offers(c.Form.Method) {
		return c.Form.Method
	}
	if len(c.Methods) > 0 {
		return c.Methods[0]
	}
	return ""
}

// Free reports whether nothing is charged now.
func (c *Checkout) Free() bool { return c.Total == 0 }

// CollectPayment reports whether the form asks for a payment method.
func (c *Checkout) CollectPayment() bool {
	return !c.Free() || (c.Mode == "subscription" && c.PaymentMethodCollection == "always")
}

// SubmitLabel is the pay button's text for submit_type and mode (SPEC 2.4).
func (c *Checkout) SubmitLabel() string {
	key := "submit_pay"
	switch c.SubmitType {
	case "subscribe":
		key = "submit_subscribe"
	case "book":
		key = "submit_book"
	case "donate":
		key = "submit_donate"
	case "auto":
		if c.Mode == "subscription" {
			key = "submit_subscribe"
		}
	}
	if c.Free() && c.Mode != "subscription" {
		return c.Lang.T("submit_free")
	}
	if c.Free() {
		return c.Lang.T(key)
	}
	return c.Lang.T(key) + " " + c.Lang.Money(c.Total)
}

// InstallmentLabel is one option of the selector: count, amount of each, and the total.
func (c *Checkout) InstallmentLabel(o InstallmentOption) string {
	s := c.Lang.Tf("installment_option", o.Count, c.Lang.Money(o.InstallmentAmount))
	switch {
	case o.Count == 1:
		return s + " (" + c.Lang.Money(o.TotalAmount) + ")"
	case o.TotalAmount > c.Total:
		return s + " " + c.Lang.T("installments_interest") + " (" + c.Lang.Tf("with_interest", c.Lang.Money(o.TotalAmount)) + ")"
	default:
		return s + " " + c.Lang.T("no_interest") + " (" + c.Lang.Tf("with_interest", c.Lang.Money(o.TotalAmount)) + ")"
	}
}

// MaxInstallments is the largest instalment count offered.
func (c *Checkout) MaxInstallments() int { return len(c.Installments) }

// MethodLabel names a payment method.
func (c *Checkout) MethodLabel(m string) string { return c.Lang.T("method_" + m) }

// MethodHint is the short line under a method's name.
func (c *Checkout) MethodHint(m string) string {
	switch m {
	case "credit_card":
		return c.Lang.Tf("credit_card_hint", max(c.MaxInstallments(), 1))
	case "pix":
		return c.Lang.T("pix_method_hint")
	case "boleto":
		return c.Lang.T("boleto_method_hint")
	}
	return ""
}

// ShowAddress reports whether the billing address fields show for the selected method: always
// when required by the session, and with boleto (SPEC 2.4).
func (c *Checkout) ShowAddress() bool { return c.RequireBillingAddress || c.Offers("boleto") }

// SummaryTitle is the summary heading for the template.
func (c *Checkout) SummaryTitle() string {
	if c.Template == "booking" {
		return c.Lang.T("booking_summary")
	}
	return c.Lang.T("order_summary")
}

// Title is the document title of the state.
func (c *Checkout) Title() string {
	switch c.State {
	case StateSuccess:
		return c.Lang.T("success_title") + " · " + c.Brand.Name
	case StateExpired:
		return c.Lang.T("expired_title")
	case StateCanceled:
		return c.Lang.T("canceled_title")
	case StateUnavailable:
		return c.Lang.T("unavailable_title")
	case StateNotFound:
		return c.Lang.T("notfound_title")
	case StateTryAgain:
		return c.Lang.T("try_again_title")
	case StateWaitingPix:
		return c.Lang.T("pix_title") + " · " + c.Brand.Name
	case StateWaitingBoleto:
		return c.Lang.T("boleto_title") + " · " + c.Brand.Name
	}
	return c.Lang.T("title") + " · " + c.Brand.Name
}

// SuccessTitle is the heading of the success page.
func (c *Checkout) SuccessTitle() string {
	switch {
	case c.Mode == "subscription":
		return c.Lang.T("success_sub_title")
	case c.Free():
		return c.Lang.T("success_free_title")
	}
	return c.Lang.T("success_title")
}

// BrandStyle is the CSS custom properties of the brand; every colour was validated as #RRGGBB.
func (c *Checkout) BrandStyle() string {
	radius := "10px"
	switch c.Brand.BorderStyle {
	case "rectangular":
		radius = "2px"
	case "pill":
		radius = "999px"
	}
	return fmt.Sprintf(":root{--brand:%s;--on-brand:%s;--bg:%s;--radius:%s}", c.Brand.PrimaryColor, OnColor(c.Brand.PrimaryColor), c.Brand.BackgroundColor, radius)
}

// OnColor returns black or white, whichever contrasts more with the #RRGGBB background (WCAG
// relative luminance), so a seller's colour never makes the pay button unreadable.
func OnColor(hex string) string {
	if len(hex) != 7 {
		return "#ffffff"
	}
	ch := func(i int) float64 {
		v, err := strconv.ParseUint(hex[i:i+2], 16, 8)
		if err != nil {
			return 0
		}
		c := float64(v) / 255
		if c <= 0.03928 {
			return c / 12.92
		}
		return math.Pow((c+0.055)/1.055, 2.4)
	}
	lum := 0.2126*ch(1) + 0.7152*ch(3) + 0.0722*ch(5)
	// Contrast with white is 1.05/(lum+0.05); with black (lum+0.05)/0.05.
	if 1.05/(lum+0.05) >= (lum+0.05)/0.05 {
		return "#ffffff"
	}
	return "#111111"
}

// RecurringText is "por mês" / "a cada 3 meses" for an interval.
func (l Lang) RecurringText(interval string, count int) string {
	if count <= 1 {
		return l.T("every_" + interval)
	}
	return l.Tf("every_n_"+interval, count)
}

// Initials is the fallback logo: the first letter of the seller's name.
func (b Brand) Initials() string {
	for _, r := range strings.TrimSpace(b.Name) {
		return strings.ToUpper(string(r))
	}
	return "·"
}

// Countdown formats seconds as MM:SS, or H:MM:SS from one hour on.
func Countdown(seconds int64) string {
	if seconds < 0 {
		seconds = 0
	}
	if seconds >= 3600 {
		return fmt.Sprintf("%d:%02d:%02d", seconds/3600, seconds%3600/60, seconds%60)
	}
	return fmt.Sprintf("%02d:%02d", seconds/60, seconds%60)
}

// Itoa formats an int for attributes.
func Itoa(n int) string { return strconv.Itoa(n) }

func itoa64(n int64) string { return strconv.FormatInt(n, 10) }

func skipText(l Lang) string {
	if l == En {
		return "Skip to content"
	}
	return "Pular para o conteúdo"
}

func otherLang(l Lang) string {
	if l == En {
		return "pt-BR"
	}
	return "en"
}

// langSwitchURL is the current page in the other language.
func langSwitchURL(c *Checkout) string {
	sep := "?"
	if strings.Contains(c.PageURL, "?") {
		sep = "&"
	}
	return c.PageURL + sep + "lang=" + otherLang(c.Lang)
}

// DocumentHint is the line under the CPF/CNPJ field (a boleto always needs the document).
func (c *Checkout) DocumentHint() string {
	if !c.RequireDocument && c.Offers("boleto") && !c.Free() {
		return c.Lang.T("document_hint_boleto")
	}
	return c.Lang.T("document_hint")
}

// invalid is the aria-invalid value of a card field: "true" when the server rejected it. (A bare
// aria-invalid attribute is an empty value, which ARIA reads as false.)
func (c *Checkout) invalid(field string) string {
	if c.Error != nil && c.Error.Field == field {
		return "true"
	}
	return "false"
}
