package email

import (
	"bytes"
	htmltemplate "html/template"
	"regexp"
	"strings"
	texttemplate "text/template"
)

// The two parts of every message come from these templates over the same Content. The HTML is
// built for mail clients: one centred table, inline styles, no scripts, no external CSS; every
// value is escaped by html/template.

var htmlTmpl = htmltemplate.Must(htmltemplate.New("html").Parse(`<!DOCTYPE html>
<html lang="{{.Lang}}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Subject}}</title></head>
<body style="margin:0;padding:0;background:#f3f4f6;font-family:-apple-system,BlinkMacSystemFont,'Segoe UI',Roboto,Helvetica,Arial,sans-serif;color:#111827">
{{if .Sandbox}}<div data-testid="sandbox-banner" style="background:#facc15;color:#422006;text-align:center;font-size:13px;padding:6px 12px">{{.SandboxText}}</div>{{end}}
<table role="presentation" width="100%" cellpadding="0" cellspacing="0" style="background:#f3f4f6"><tr><td align="center" style="padding:24px 12px">
<table role="presentation" width="100%" cellpadding="0" cellspacing="0" style="max-width:560px;background:#ffffff;border-radius:12px;overflow:hidden">
<tr><td style="background:{{.Color}};padding:20px 24px;color:#ffffff">
{{if .Brand.Logo}}<img src="{{.Brand.Logo}}" alt="{{.Brand.Name}}" height="32" style="display:block;height:32px;max-width:200px;margin-bottom:8px">{{end}}
<div style="font-size:15px;font-weight:600" data-testid="email-org">{{.Brand.Name}}</div></td></tr>
<tr><td style="padding:24px">
<h1 style="font-size:22px;line-height:1.3;margin:0 0 16px" data-testid="email-heading">{{.Heading}}</h1>
<p style="margin:0 0 12px;font-size:15px;line-height:1.5">{{.Greeting}}</p>
{{range .Intro}}<p style="margin:0 0 12px;font-size:15px;line-height:1.5">{{.}}</p>{{end}}
{{if .Facts}}<table role="presentation" width="100%" cellpadding="0" cellspacing="0" style="margin:16px 0;border-top:1px solid #e5e7eb">
{{range .Facts}}<tr><td style="padding:10px 0;border-bottom:1px solid #e5e7eb;color:#6b7280;font-size:14px">{{.Label}}</td><td align="right" style="padding:10px 0;border-bottom:1px solid #e5e7eb;font-size:14px;font-weight:600;word-break:break-all">{{.Value}}</td></tr>
{{end}}</table>{{end}}
{{if .QRImage}}<p style="text-align:center;margin:16px 0"><img src="{{.QRImage}}" alt="QR Code PIX" width="200" height="200" style="width:200px;height:200px"></p>{{end}}
{{if .Code}}<p style="margin:16px 0 6px;font-size:13px;color:#6b7280">{{.CodeLabel}}</p>
<div data-testid="email-code" style="font-family:ui-monospace,Menlo,Consolas,monospace;font-size:14px;background:#f9fafb;border:1px solid #e5e7eb;border-radius:8px;padding:12px;word-break:break-all">{{.Code}}</div>{{end}}
{{if .Code2}}<p style="margin:16px 0 6px;font-size:13px;color:#6b7280">{{.Code2Lbl}}</p>
<div style="font-family:ui-monospace,Menlo,Consolas,monospace;font-size:13px;background:#f9fafb;border:1px solid #e5e7eb;border-radius:8px;padding:12px;word-break:break-all">{{.Code2}}</div>{{end}}
{{range .Actions}}<p style="margin:20px 0 0"><a href="{{.URL}}" style="display:inline-block;background:{{$.Color}};color:#ffffff;text-decoration:none;font-weight:600;font-size:15px;padding:12px 20px;border-radius:8px">{{.Label}}</a></p>{{end}}
{{range .Outro}}<p style="margin:16px 0 0;font-size:14px;line-height:1.5">{{.}}</p>{{end}}
</td></tr>
<tr><td style="padding:16px 24px;background:#f9fafb;color:#6b7280;font-size:12px;line-height:1.5">{{.Footer}}</td></tr>
</table></td></tr></table></body></html>
`))

var textTmpl = texttemplate.Must(texttemplate.New("text").Parse(`{{if .Sandbox}}[{{.SandboxText}}]

{{end}}{{.Brand.Name}}

{{.Heading}}

{{.Greeting}}
{{range .Intro}}
{{.}}
{{end}}{{if .Facts}}
{{range .Facts}}{{.Label}}: {{.Value}}
{{end}}{{end}}{{if .Code}}
{{.CodeLabel}}:
{{.Code}}
{{end}}{{if .Code2}}
{{.Code2Lbl}}:
{{.Code2}}
{{end}}{{range .Actions}}
{{.Label}}: {{.URL}}
{{end}}{{range .Outro}}
{{.}}
{{end}}
--
{{.Footer}}
`))

var hexColor = regexp.MustCompile(`^#[0-9A-Fa-f]{6}$`)

type view struct {
	Content
	Color       htmltemplate.CSS
	SandboxText string
}

// Render writes the plain-text and HTML parts of c.
func Render(c Content) (text, html string, err error) {
	color := "#0a7c55"
	if hexColor.MatchString(c.Brand.Color) {
		color = c.Brand.Color
	}
	if !strings.HasPrefix(c.Brand.Logo, "https://") {
		c.Brand.Logo = ""
	}
	v := view{Content: c, Color: htmltemplate.CSS(color), SandboxText: t(c.Lang, "sandbox")}
	var tb, hb bytes.Buffer
	if err := textTmpl.Execute(&tb, v); err != nil {
		return "", "", err
	}
	if err := htmlTmpl.Execute(&hb, v); err != nil {
		return "", "", err
	}
	return tb.String(), hb.String(), nil
}
