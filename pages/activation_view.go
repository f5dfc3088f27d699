package pages

// ActivationOption is one choice of a select field of the activation form.
type ActivationOption struct {
	Value, Label string
	Selected     bool
}

// ActivationField is one input of the activation form, with the seller's value and, after a
// failed submission, its Portuguese error.
type ActivationField struct {
	Name         string
	Label        string
	Kind         string // text, email, tel, date, select, file, checkbox
	Value        string
	Error        string
	Hint         string
	Required     bool
	Autocomplete string
	InputMode    string
	MaxLen       int
	Options      []ActivationOption
	// Uploaded names the file already sent for a file field.
	Uploaded string
}

// ID is the element id of the field's input.
func (f ActivationField) ID() string { return "f-" + f.Name }

// HintID is the element id of the field's hint.
func (f ActivationField) HintID() string { return "h-" + f.Name }

// ErrorID is the element id of the field's error message.
func (f ActivationField) ErrorID() string { return "e-" + f.Name }

// DescribedBy lists the hint and error ids for aria-describedby.
func (f ActivationField) DescribedBy() string {
	out := ""
	if f.Hint != "" {
		out = f.HintID()
	}
	if f.Error != "" {
		if out != "" {
			out += " "
		}
		out += f.ErrorID()
	}
	return out
}

// ActivationStep is one entry of the step indicator.
type ActivationStep struct {
	Number  int
	Title   string
	URL     string
	Current bool
	Done    bool
}

// ActivationSummaryRow is one line of the review shown on the last step.
type ActivationSummaryRow struct {
	Label, Value string
}

// ActivationPage is one step of the hosted activation form.
type ActivationPage struct {
	Livemode     bool
	OrgName      string
	Document     string // "CNPJ 12.ABC.345/01DE-35"
	PlatformName string // empty for an organization's own onboarding
	Steps        []ActivationStep
	StepNumber   int
	StepCount    int
	StepKey      string
	StepTitle    string
	StepIntro    string
	Fields       []ActivationField
	Action       string // form action
	CSRF         string
	CanGoBack    bool
	Last         bool
	// Notices are the requirements a previous review asked to correct.
	Notices []string
	Summary []ActivationSummaryRow
	// FormError is a message about the whole form (the organization can no longer be submitted).
	FormError string
	AssetBase string
}

// Errors lists the fields with an error, for the summary at the top of the form.
func (p ActivationPage) Errors() []ActivationField {
	var out []ActivationField
	for _, f := range p.Fields {
		if f.Error != "" {
			out = append(out, f)
		}
	}
	return out
}

// Title is the document title.
func (p ActivationPage) Title() string {
	t := p.StepTitle + " · Ativação da conta"
	if len(p.Errors()) > 0 {
		t = "Erro: " + t
	}
	return t
}

// ActivationMessage is a page that only says something: the link expired or was already used,
// the session is over, the organization cannot be submitted.
type ActivationMessage struct {
	Title     string
	Message   string
	Hint      string
	AssetBase string
}
