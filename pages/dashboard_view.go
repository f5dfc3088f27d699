package pages

import "strconv"

// Dash is what every dashboard page shows around its content: who is signed in, which
// organization and environment, the navigation and the form token.
type Dash struct {
	Lang       string // "pt-BR" or "en"
	OrgName    string
	Email      string
	Role       string
	Env        string // "test" or "live"
	Active     string // the nav entry shown as current
	CSRF       string
	TimeTravel bool
	// MailboxURL, in test mode, opens the organization's sandbox mailbox (customer e-mail).
	MailboxURL string
	// Orgs are the organizations the person can switch to (the current one selected); the
	// switcher is shown when there are two or more.
	Orgs []Option
}

// Sandbox reports whether the yellow bar is shown.
func (d *Dash) Sandbox() bool { return d.Env != "live" }

// T translates an English interface string into the page's language.
func (d *Dash) T(s string) string { return T(d.Lang, s) }

// Base is the URL prefix of the current environment.
func (d *Dash) Base() string { return "/dashboard/" + d.Env }

// OtherEnv is the environment the switch leads to.
func (d *Dash) OtherEnv() string {
	if d.Env == "live" {
		return "test"
	}
	return "live"
}

// SwitchHref is where the test/live switch leads: the same page in the other environment (its
// home for the home page, whose URL has no page name).
func (d *Dash) SwitchHref() string {
	if d.Active == "" || d.Active == "home" {
		return "/dashboard/" + d.OtherEnv()
	}
	return "/dashboard/" + d.OtherEnv() + "/" + d.Active
}

// NavItem is one entry of the navigation.
type NavItem struct{ Key, Label, Href string }

// Nav lists the pages of the environment.
func (d *Dash) Nav() []NavItem {
	keys := []struct{ k, l string }{
		{"home", "Home"}, {"payments", "Payments"}, {"checkout-sessions", "Checkout sessions"}, {"customers", "Customers"},
		{"invoices", "Invoices"}, {"subscriptions", "Subscriptions"}, {"disputes", "Disputes"}, {"events", "Events"}, {"webhooks", "Webhooks"},
		{"api-keys", "API keys"}, {"logs", "Request logs"}, {"settings", "Settings"},
	}
	out := make([]NavItem, 0, len(keys))
	for _, k := range keys {
		// Pages the person's role cannot open are not offered (the server refuses them anyway):
		// API keys are for owners and admins, request logs for developers and above.
		if (k.k == "api-keys" && d.Role != "owner" && d.Role != "admin") || (k.k == "logs" && d.Role == "viewer") {
			continue
		}
		href := d.Base() + "/" + k.k
		if k.k == "home" {
			href = d.Base()
		}
		out = append(out, NavItem{Key: k.k, Label: d.T(k.l), Href: href})
	}
	return out
}

// Page is the content of one dashboard page: a title and sections in order.
type Page struct {
	Title    string
	Notice   string
	Error    string
	Token    string // an API key's token, shown once
	Sections []Section
}

// Section is one block of a page; the set fields are rendered in this order.
type Section struct {
	Title  string
	Text   string
	Fields []Field
	Chart  *Chart
	Form   *Form
	Table  *Table
	Pager  *Pager
	Pre    string
}

// Field is one label/value line of an object's page.
type Field struct {
	Label, Value, Href string
	Code               bool
	// Image, when set, is a data:image/png;base64 URI built server-side (a QR code) shown above
	// Value; Value stays as its text alternative.
	Image string
}

// Table is a list; TestID marks it for tests.
type Table struct {
	TestID  string
	Caption string
	Headers []string
	Rows    [][]Cell
	Empty   string
}

// Cell is one table cell: text (escaped), optionally a link, or a small form (a button).
type Cell struct {
	Text string
	Href string
	Code bool
	Form *Form
}

// Form is a POST (or GET, for filters) form; the CSRF token is added to every POST.
type Form struct {
	Action       string
	Method       string // "" means post
	TestID       string
	Submit       string
	SubmitTestID string
	Danger       bool
	Inline       bool
	Inputs       []Input
}

// Input is one form control.
type Input struct {
	Name, Label, Kind, Value, Hint string
	Required                       bool
	Checked                        bool
	Options                        []Option
}

// ID is the element id of the input.
func (i Input) ID(form string) string { return "in-" + form + "-" + i.Name }

// Option is one choice of a select input.
type Option struct {
	Value, Label string
	Selected     bool
}

// Pager links to the previous and next pages of a cursor list.
type Pager struct{ Prev, Next string }

// Chart is a bar chart drawn as SVG on the server.
type Chart struct {
	Title  string
	Desc   string
	Width  int
	Height int
	Bars   []Bar
}

// Bar is one bar of a chart (coordinates in the SVG's user units).
type Bar struct {
	Label, Value string
	X, Y, W, H   int
}

func itoa(n int) string { return strconv.Itoa(n) }

// Signin is the sign-in page.
type Signin struct {
	Lang  string
	CSRF  string
	Email string
	Error string
	TOTP  bool // the second step: the authenticator code
}

// T translates s.
func (s *Signin) T(x string) string { return T(s.Lang, x) }

func header(h []string, i int) string {
	if i < len(h) {
		return h[i]
	}
	return ""
}
