package server

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/a-h/templ"
	"github.com/julienschmidt/httprouter"

	"troco/db"
	"troco/pages"
	"troco/server/activation"
	"troco/server/core"
	"troco/server/document"
	"troco/server/domain"
	"troco/server/jobs"
	"troco/static"
)

// The hosted activation flow (SPEC 3.1, CONTRACT 7): the url's single-use authorization code
// opens a browser session (an HttpOnly cookie scoped to the session's pages), then a multi-step
// form posts each step back to the server. Every page works without JavaScript.
const (
	activationCookie     = "troco_activation"
	activationPagePrefix = "/activation/sessions/"
	activationAssetBase  = "/activation/assets"
	// activationFormLimit bounds a posted step: the identity document plus the text fields.
	activationFormLimit = activation.MaxUploadBytes + 1<<20
)

// registerActivationJobs adds the sandbox review job (CONTRACT 6: the outcome after --sim-delay).
func (s *Server) registerActivationJobs() {
	s.cfg.Jobs.Add(jobs.Job{Name: "activation-reviews", Every: 5 * time.Second, Run: func(ctx context.Context, now time.Time) error {
		return s.db.Write(ctx, func(tx *db.Tx) error {
			_, err := core.ApplyDueActivationReviews(tx, now)
			return err
		})
	}})
}

func activationPageURL(id string) string { return activationPagePrefix + id }

// activationCSRF is the form token of a browser session: an HMAC of its cookie token, so it
// needs no storage and cannot be forged without the cookie.
func (s *Server) activationCSRF(browserToken string) string {
	m := hmac.New(sha256.New, s.cfg.Secrets.DeriveKey("activation csrf"))
	m.Write([]byte(browserToken))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

func activationCookieValue(r *http.Request) string {
	c, err := r.Cookie(activationCookie)
	if err != nil {
		return ""
	}
	return c.Value
}

// writeActivationHTML renders c into a buffer first, so a failed render never sends half a page.
func (s *Server) writeActivationHTML(w http.ResponseWriter, r *http.Request, status int, c templ.Component) {
	var buf bytes.Buffer
	if err := c.Render(r.Context(), &buf); err != nil {
		s.log.ErrorContext(r.Context(), "render activation page", slog.String("request_id", requestID(r.Context())), slog.String("error", err.Error()))
		status, buf = http.StatusInternalServerError, *bytes.NewBufferString("<!DOCTYPE html><title>Erro</title><p>Erro inesperado. Tente novamente.</p>")
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'self'; img-src 'self'; base-uri 'none'; frame-ancestors 'none'")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

func (s *Server) activationMessage(w http.ResponseWriter, r *http.Request, status int, title, message string) {
	s.writeActivationHTML(w, r, status, pages.ActivationNotice(pages.ActivationMessage{Title: title, Message: message,
		Hint: "Volte à plataforma que enviou o link e peça um novo. Nenhum dado foi alterado.", AssetBase: activationAssetBase}))
}

func (s *Server) activationLinkExpired(w http.ResponseWriter, r *http.Request) {
	s.activationMessage(w, r, http.StatusGone, "Link expirado ou já utilizado",
		"Por segurança, cada link de ativação pode ser aberto uma única vez e vale por 60 segundos.")
}

func (s *Server) activationSessionOver(w http.ResponseWriter, r *http.Request) {
	s.activationMessage(w, r, http.StatusForbidden, "Sessão de cadastro encerrada",
		"Esta sessão não está mais disponível neste navegador: ela expirou, foi aberta em outro navegador ou o cadastro já foi enviado.")
}

func (s *Server) activationFailed(w http.ResponseWriter, r *http.Request, err error) {
	s.log.ErrorContext(r.Context(), "activation page", slog.String("request_id", requestID(r.Context())), slog.String("error", err.Error()))
	s.activationMessage(w, r, http.StatusInternalServerError, "Erro inesperado", "Não foi possível carregar o cadastro agora. Tente novamente em instantes.")
}

// handleActivationStart spends the url's authorization code: the session moves to in_progress
// (opened_at on the first open), this browser gets the session cookie and goes to the form. An
// unknown, used or expired code shows the expired page and changes nothing.
func (s *Server) handleActivationStart() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		code := r.URL.Query().Get("authorization_code")
		var id, token string
		err := s.db.Write(context.WithoutCancel(r.Context()), func(tx *db.Tx) error {
			var err error
			id, token, err = core.OpenActivationSession(tx, code)
			return err
		})
		switch {
		case errors.Is(err, core.ErrActivationLinkExpired):
			s.activationLinkExpired(w, r)
			return
		case err != nil:
			s.activationFailed(w, r, err)
			return
		}
		http.SetCookie(w, &http.Cookie{Name: activationCookie, Value: token, Path: activationPageURL(id), MaxAge: int(core.ActivationBrowserTTL / time.Second),
			HttpOnly: true, Secure: true, SameSite: http.SameSiteLaxMode})
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("Referrer-Policy", "no-referrer")
		http.Redirect(w, r, activationPageURL(id), http.StatusSeeOther)
	})
}

// handleActivationPage shows a step of the form (?step=business…; the first by default).
func (s *Server) handleActivationPage() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := pathID(r)
		token := activationCookieValue(r)
		var f *core.ActivationForm
		err := s.db.Read(r.Context(), func(tx *db.Tx) error {
			var err error
			f, err = core.LoadActivationForm(tx, id, token)
			return err
		})
		switch {
		case errors.Is(err, core.ErrActivationSessionInvalid):
			s.activationSessionOver(w, r)
			return
		case err != nil:
			s.activationFailed(w, r, err)
			return
		}
		step := max(activation.StepIndex(r.URL.Query().Get("step")), 0)
		s.writeActivationHTML(w, r, http.StatusOK, pages.Activation(s.activationView(f, token, step, nil, "")))
	})
}

// activationOutcome is what a posted step leads to once its transaction committed.
type activationOutcome struct {
	redirect  string
	status    int
	step      int
	errs      map[string]string
	formError string
	submitted bool
}

// handleActivationPost saves a step (any step's fields may be posted; the file of the last step
// too) and moves back, forward, or submits the whole form.
func (s *Server) handleActivationPost() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := pathID(r)
		token := activationCookieValue(r)
		r.Body = http.MaxBytesReader(w, r.Body, activationFormLimit)
		if err := r.ParseMultipartForm(1 << 20); err != nil {
			if !errors.Is(err, http.ErrNotMultipart) {
				var mbe *http.MaxBytesError
				if errors.As(err, &mbe) {
					s.activationMessage(w, r, http.StatusRequestEntityTooLarge, "Arquivo muito grande",
						"O documento deve ter até 5 MB. Volte, escolha um arquivo menor e envie de novo.")
					return
				}
				s.activationMessage(w, r, http.StatusBadRequest, "Formulário inválido", "Não foi possível ler o formulário enviado. Tente novamente.")
				return
			}
			if err := r.ParseForm(); err != nil {
				s.activationMessage(w, r, http.StatusBadRequest, "Formulário inválido", "Não foi possível ler o formulário enviado. Tente novamente.")
				return
			}
		}
		if token == "" || subtle.ConstantTimeCompare([]byte(r.PostFormValue("csrf_token")), []byte(s.activationCSRF(token))) != 1 {
			s.activationSessionOver(w, r)
			return
		}
		step := max(activation.StepIndex(r.PostFormValue("step")), 0)
		action := r.PostFormValue("action")
		upload, uploadErr := readActivationUpload(r)

		if upload != nil {
			// The bytes first, durable, then the row in the form's transaction; bytes whose row
			// did not commit are removed below (or by the start-up sweep after a crash).
			if err := s.files.Write(upload.FileID, upload.content); err != nil {
				s.activationFailed(w, r, err)
				return
			}
			defer func() {
				if !s.fileRowExists(upload.FileID) {
					_ = s.files.Remove(upload.FileID)
				}
			}()
		}
		var out activationOutcome
		var f *core.ActivationForm
		err := s.db.Write(context.WithoutCancel(r.Context()), func(tx *db.Tx) error {
			var err error
			if f, err = core.LoadActivationForm(tx, id, token); err != nil {
				return err
			}
			activation.Merge(f.Values, r.PostForm, activation.Steps[step].Key)
			if upload != nil {
				if err := core.StoreActivationUpload(tx, f, upload.ActivationUpload); err != nil {
					return err
				}
			}
			if err := core.SaveActivationDraft(tx, f); err != nil {
				return err
			}
			out = s.activationAdvance(tx, f, step, action, uploadErr, requestID(r.Context()))
			return nil
		})
		switch {
		case errors.Is(err, core.ErrActivationSessionInvalid):
			s.activationSessionOver(w, r)
			return
		case err != nil:
			s.activationFailed(w, r, err)
			return
		}
		if out.submitted {
			http.SetCookie(w, &http.Cookie{Name: activationCookie, Value: "", Path: activationPageURL(id), MaxAge: -1, HttpOnly: true, Secure: true, SameSite: http.SameSiteLaxMode})
		}
		if out.redirect != "" {
			w.Header().Set("Cache-Control", "no-store")
			http.Redirect(w, r, out.redirect, http.StatusSeeOther)
			return
		}
		s.writeActivationHTML(w, r, out.status, pages.Activation(s.activationView(f, token, out.step, out.errs, out.formError)))
	})
}

// activationAdvance decides where a saved step goes: back, the next step, the same step with
// its errors, or (action submit, every step valid) the submission and the return_url.
func (s *Server) activationAdvance(tx *db.Tx, f *core.ActivationForm, step int, action, uploadErr, requestID string) activationOutcome {
	page := func(i int) string {
		return activationPageURL(f.Session.ID) + "?step=" + activation.Steps[i].Key
	}
	docStep := activation.StepIndex("documents")
	switch action {
	case "back":
		return activationOutcome{redirect: page(max(step-1, 0))}
	case "submit":
		res, errs, first := activation.Validate(f.Values, tx.Now)
		if uploadErr != "" {
			if errs == nil {
				errs = map[string]string{}
			}
			errs[activation.DraftDocumentFile] = uploadErr
			if first < 0 || first > docStep {
				first = docStep
			}
		}
		if len(errs) > 0 {
			return activationOutcome{status: http.StatusUnprocessableEntity, step: first, errs: errs}
		}
		var submitErr error
		spErr := tx.Savepoint(func() error {
			submitErr = core.SubmitActivation(tx, f, res, requestID, s.cfg.SimDelay)
			return submitErr
		})
		var notAllowed *core.ActivationNotAllowedError
		switch {
		case errors.As(submitErr, &notAllowed):
			return activationOutcome{status: http.StatusConflict, step: docStep, formError: activationNotAllowedMessage(notAllowed.Err)}
		case submitErr != nil || spErr != nil:
			s.log.Error("submit activation", slog.String("request_id", requestID), slog.Any("error", errors.Join(submitErr, spErr)))
			return activationOutcome{status: http.StatusInternalServerError, step: docStep, formError: "Erro inesperado ao enviar o cadastro. Tente novamente."}
		}
		return activationOutcome{redirect: f.Session.ReturnURL, submitted: true}
	default: // next
		errs := activation.ValidateStep(step, f.Values, tx.Now)
		if uploadErr != "" && step == docStep {
			errs[activation.DraftDocumentFile] = uploadErr
		}
		if len(errs) > 0 {
			return activationOutcome{status: http.StatusUnprocessableEntity, step: step, errs: errs}
		}
		return activationOutcome{redirect: page(min(step+1, len(activation.Steps)-1))}
	}
}

func activationNotAllowedMessage(e *domain.Error) string {
	switch e.Code {
	case domain.CodeOrgAlreadyActive:
		return "Esta organização já está ativa; não é preciso enviar o cadastro de novo."
	case domain.CodeOrgActivationInReview:
		return "Esta organização já está em análise. Aguarde o resultado."
	case domain.CodeActivationNotRetryable:
		return "Esta organização não pode mais reenviar o cadastro."
	case domain.CodeDocumentAlreadyInUse:
		return "O CPF ou CNPJ da organização já está em uso em outra ativação."
	case domain.CodeOrgDocumentRequired:
		return "A organização não tem um CPF ou CNPJ válido cadastrado. Peça à plataforma para corrigi-lo."
	}
	return "Envie novamente o documento de identificação."
}

// readActivationUpload returns the identity document of a posted step (nil when none was sent)
// or a Portuguese error: at most 5 MB, and a PDF, PNG or JPEG by its content, not its name.
func readActivationUpload(r *http.Request) (*activationUpload, string) {
	if r.MultipartForm == nil || len(r.MultipartForm.File[activation.DraftDocumentFile]) == 0 {
		return nil, ""
	}
	fh := r.MultipartForm.File[activation.DraftDocumentFile][0]
	if fh.Size == 0 && fh.Filename == "" {
		return nil, "" // the browser's empty file input
	}
	if fh.Size > activation.MaxUploadBytes {
		return nil, "O arquivo tem mais de 5 MB. Envie um arquivo menor."
	}
	content, err := readMultipartFile(fh)
	if err != nil || len(content) == 0 {
		return nil, "Não foi possível ler o arquivo. Envie um PDF, PNG ou JPEG de até 5 MB."
	}
	mt := http.DetectContentType(content)
	if i := strings.IndexByte(mt, ';'); i >= 0 {
		mt = mt[:i]
	}
	if !slices.Contains(activation.UploadMIMETypes, mt) {
		return nil, "Formato não aceito: envie um arquivo PDF, PNG ou JPEG."
	}
	name := strings.TrimSpace(fh.Filename)
	if i := strings.LastIndexAny(name, `/\`); i >= 0 {
		name = name[i+1:]
	}
	if name == "" || len(name) > 200 {
		name = "documento"
	}
	name = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || strings.ContainsRune(`/\:"`, r) {
			return '_'
		}
		return r
	}, strings.ReplaceAll(name, "..", "_"))
	sum := sha256.Sum256(content)
	return &activationUpload{ActivationUpload: core.ActivationUpload{FileID: domain.NewID(domain.PrefixFile), Filename: name, MIMEType: mt,
		Size: int64(len(content)), SHA256: hex.EncodeToString(sum[:])}, content: content}, ""
}

// activationUpload is an identity document read from the form, before its bytes are committed.
type activationUpload struct {
	core.ActivationUpload
	content []byte
}

func readMultipartFile(fh *multipart.FileHeader) ([]byte, error) {
	f, err := fh.Open()
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, activation.MaxUploadBytes+1))
}

// activationView builds the page of one step.
func (s *Server) activationView(f *core.ActivationForm, token string, step int, errs map[string]string, formError string) pages.ActivationPage {
	now := s.cfg.Clock.Now()
	st := activation.Steps[step]
	p := pages.ActivationPage{
		Livemode:   f.Session.Livemode,
		OrgName:    f.Org.Name,
		StepNumber: step + 1,
		StepCount:  len(activation.Steps),
		StepKey:    st.Key,
		StepTitle:  st.Title,
		StepIntro:  st.Intro,
		Action:     activationPageURL(f.Session.ID),
		CSRF:       s.activationCSRF(token),
		CanGoBack:  step > 0,
		Last:       step == len(activation.Steps)-1,
		FormError:  formError,
		AssetBase:  activationAssetBase,
	}
	if f.Platform != nil {
		p.PlatformName = f.Platform.Name
	}
	if f.Org.Document != nil {
		if d, err := document.Parse(*f.Org.Document); err == nil {
			p.Document = strings.ToUpper(string(d.Type)) + " " + d.Mask()
		}
	}
	if f.Org.ActivationStatus == domain.ActivationDisabled {
		for _, m := range f.Org.Requirements.Missing {
			p.Notices = append(p.Notices, activation.MissingLabel(m))
		}
	}
	for i, other := range activation.Steps {
		done := len(activation.ValidateStep(i, f.Values, now)) == 0
		p.Steps = append(p.Steps, pages.ActivationStep{Number: i + 1, Title: other.Title, Current: i == step, Done: done && i != step,
			URL: activationPageURL(f.Session.ID) + "?step=" + other.Key})
	}
	for _, fd := range st.Fields {
		pf := pages.ActivationField{Name: fd.Name, Label: fd.Label, Kind: fd.Kind, Value: f.Values[fd.Name], Error: errs[fd.Name], Hint: fd.Hint,
			Required: fd.Required, Autocomplete: fd.Autocomplete, InputMode: fd.InputMode, MaxLen: fd.MaxLen}
		for _, o := range fd.Options {
			pf.Options = append(pf.Options, pages.ActivationOption{Value: o.Value, Label: o.Label, Selected: o.Value == f.Values[fd.Name]})
		}
		switch fd.Kind {
		case activation.KindFile:
			pf.Value, pf.Uploaded = "", f.Values[activation.DraftDocumentFileName]
		case activation.KindDate:
			pf.Value = activation.DisplayDate(pf.Value)
		case activation.KindBank:
			for _, o := range activation.Banks {
				pf.Options = append(pf.Options, pages.ActivationOption{Value: o.Value, Label: o.Label})
			}
			if code := activation.BankCode(pf.Value); code != "" {
				pf.Value = activation.BankLabel(code)
			}
		}
		p.Fields = append(p.Fields, pf)
	}
	if p.Last {
		p.Summary = activationSummary(f, p.Document)
	}
	return p
}

// activationSummary is the review of the last step.
func activationSummary(f *core.ActivationForm, doc string) []pages.ActivationSummaryRow {
	v := f.Values
	label := func(opts []activation.Option, val string) string {
		for _, o := range opts {
			if o.Value == val {
				return o.Label
			}
		}
		return val
	}
	birth := v["rep_birth_date"]
	if t, err := time.Parse("2006-01-02", birth); err == nil {
		birth = t.Format("02/01/2006")
	}
	addr := strings.TrimSpace(strings.Join(nonEmpty(v["line1"]+", "+v["number"], v["line2"], v["neighborhood"], v["city"]+" - "+v["state"], activation.FormatCEP(strings.ReplaceAll(v["postal_code"], "-", ""))), " · "))
	rows := []pages.ActivationSummaryRow{
		{Label: "Razão social ou nome", Value: v["legal_name"]},
		{Label: "Nome fantasia", Value: v["trade_name"]},
		{Label: "Documento", Value: doc},
		{Label: "E-mail", Value: v["email"]},
		{Label: "Telefone", Value: v["phone"]},
		{Label: "Representante legal", Value: strings.Join(nonEmpty(v["rep_name"], prefixed("CPF ", v["rep_document"])), " · ")},
		{Label: "Data de nascimento", Value: birth},
		{Label: "Endereço", Value: addr},
		{Label: "Conta para repasses", Value: strings.Join(nonEmpty(prefixed("Banco ", activation.BankLabel(activation.BankCode(v["bank_code"]))), prefixed("Agência ", v["branch"]),
			prefixed("Conta ", v["account_number"]), label(activation.AccountTypes, v["account_type"])), " · ")},
	}
	out := rows[:0]
	for _, r := range rows {
		if strings.Trim(r.Value, " ·-,") != "" {
			out = append(out, r)
		}
	}
	return out
}

// prefixed is label+v, or "" when v is empty.
func prefixed(label, v string) string {
	if v == "" {
		return ""
	}
	return label + v
}

func nonEmpty(parts ...string) []string {
	var out []string
	for _, p := range parts {
		if strings.Trim(p, " ,-") != "" {
			out = append(out, p)
		}
	}
	return out
}

// handleActivationAsset serves the activation stylesheet.
func (s *Server) handleActivationAsset() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if httprouter.ParamsFromContext(r.Context()).ByName("file") != "activation.css" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/css; charset=utf-8")
		w.Header().Set("Cache-Control", "public, max-age=3600")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Write(static.ActivationCSS)
	})
}
