package pages

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/go-pdf/fpdf"
)

// InvoicePDF renders the invoice as the PDF document a Brazilian customer expects: issuer and
// customer with their CPF/CNPJ, number, dates in the customer's zone, lines, totals (fine and
// interest included), the due date and how to pay. It is built with go-pdf/fpdf (no PDF is
// written by hand); texts go through its cp1252 translator for the accents of Portuguese.
func InvoicePDF(p *InvoicePage) ([]byte, error) {
	pdf := fpdf.New("P", "mm", "A4", "")
	pdf.SetTitle(p.IT("title")+" "+Text(p.Inv.Number), true)
	pdf.SetCreator("troco", true)
	pdf.SetMargins(18, 18, 18)
	pdf.SetAutoPageBreak(true, 18)
	pdf.AddPage()
	tr := pdf.UnicodeTranslatorFromDescriptor("")
	t := func(s string) string { return tr(strings.ReplaceAll(s, "−", "-")) }
	w, _ := pdf.GetPageSize()
	content := w - 36

	if p.Sandbox() {
		pdf.SetFillColor(255, 222, 89)
		pdf.SetFont("Helvetica", "B", 9)
		pdf.CellFormat(content, 7, t(map[bool]string{true: "TEST · ", false: "TESTE · "}[p.Lang == En]+p.IT("sandbox")), "", 1, "C", true, 0, "")
		pdf.Ln(3)
	}
	pdf.SetFont("Helvetica", "B", 16)
	pdf.CellFormat(content/2, 8, t(p.Org.Name), "", 0, "L", false, 0, "")
	label, _ := InvoiceStatus(p.Lang, p.Inv, p.Now)
	pdf.CellFormat(content/2, 8, t(strings.ToUpper(p.IT("title"))+" "+Text(p.Inv.Number)), "", 1, "R", false, 0, "")
	pdf.SetFont("Helvetica", "", 10)
	if d := Doc(p.Org.Document); d != "" {
		pdf.CellFormat(content/2, 5, t(p.IT("doc")+": "+d), "", 0, "L", false, 0, "")
	} else {
		pdf.CellFormat(content/2, 5, "", "", 0, "L", false, 0, "")
	}
	pdf.CellFormat(content/2, 5, t(label), "", 1, "R", false, 0, "")
	pdf.Ln(4)

	// Parties.
	pdf.SetFont("Helvetica", "B", 9)
	pdf.CellFormat(content, 5, t(strings.ToUpper(p.IT("billed_to"))), "", 1, "L", false, 0, "")
	pdf.SetFont("Helvetica", "", 10)
	for _, line := range []string{Text(p.Customer.Name), Text(p.Customer.Email), docLine(p)} {
		if line != "" {
			pdf.CellFormat(content, 5, t(line), "", 1, "L", false, 0, "")
		}
	}
	if a := p.Customer.Address; a != nil {
		addr := strings.TrimSpace(strings.Join(nonEmpty(a.Line1, a.Number, a.Line2, a.Neighborhood), ", "))
		city := strings.TrimSpace(strings.Join(nonEmpty(a.City, a.State, a.PostalCode), " - "))
		for _, line := range []string{addr, city} {
			if line != "" {
				pdf.CellFormat(content, 5, t(line), "", 1, "L", false, 0, "")
			}
		}
	}
	pdf.Ln(3)

	// Dates.
	facts := [][2]string{}
	if !p.Inv.StatusTransitions.FinalizedAt.IsZero() {
		facts = append(facts, [2]string{map[bool]string{true: "Issued", false: "Emissão"}[p.Lang == En], p.When(p.Inv.StatusTransitions.FinalizedAt)})
	}
	if !p.Inv.DueDate.IsZero() {
		facts = append(facts, [2]string{p.IT("due"), p.When(p.Inv.DueDate)})
	}
	if !p.Inv.PeriodStart.IsZero() {
		facts = append(facts, [2]string{p.IT("period"), p.Day(p.Inv.PeriodStart) + " - " + p.Day(p.Inv.PeriodEnd)})
	}
	if p.Inv.Status == "paid" {
		facts = append(facts, [2]string{p.IT("paid_at"), p.When(p.Inv.StatusTransitions.PaidAt)})
	}
	for _, f := range facts {
		pdf.SetFont("Helvetica", "B", 10)
		pdf.CellFormat(35, 5, t(f[0]), "", 0, "L", false, 0, "")
		pdf.SetFont("Helvetica", "", 10)
		pdf.CellFormat(content-35, 5, t(f[1]), "", 1, "L", false, 0, "")
	}
	pdf.Ln(4)

	// Lines.
	pdf.SetFillColor(238, 238, 238)
	pdf.SetFont("Helvetica", "B", 10)
	pdf.CellFormat(content-60, 7, t(p.IT("description")), "B", 0, "L", true, 0, "")
	pdf.CellFormat(20, 7, t(p.IT("qty")), "B", 0, "R", true, 0, "")
	pdf.CellFormat(40, 7, t(p.IT("amount")), "B", 1, "R", true, 0, "")
	pdf.SetFont("Helvetica", "", 10)
	for _, l := range p.Inv.Lines.Data {
		pdf.CellFormat(content-60, 6, t(clip(p.LineText(l), 70)), "B", 0, "L", false, 0, "")
		pdf.CellFormat(20, 6, fmt.Sprint(l.Quantity), "B", 0, "R", false, 0, "")
		pdf.CellFormat(40, 6, t(p.Lang.Money(l.SubtotalAmount)), "B", 1, "R", false, 0, "")
	}
	total := func(label string, amount int64, bold bool) {
		style := ""
		if bold {
			style = "B"
		}
		pdf.SetFont("Helvetica", style, 10)
		pdf.CellFormat(content-40, 6, t(label), "", 0, "R", false, 0, "")
		pdf.CellFormat(40, 6, t(p.Lang.Money(amount)), "", 1, "R", false, 0, "")
	}
	total(p.IT("subtotal"), p.Inv.SubtotalAmount, false)
	if p.Inv.DiscountAmount > 0 {
		total(p.IT("discount"), -p.Inv.DiscountAmount, false)
	}
	if p.Inv.FineAmount > 0 {
		total(p.IT("fine"), p.Inv.FineAmount, false)
	}
	if p.Inv.InterestAmount > 0 {
		total(p.IT("interest"), p.Inv.InterestAmount, false)
	}
	if p.Inv.Status == "paid" {
		total(p.IT("total_paid"), p.Inv.AmountPaid, true)
	} else {
		total(p.IT("total_due"), p.Inv.AmountRemaining, true)
	}
	pdf.Ln(5)

	// How to pay.
	if p.Payable() {
		pdf.SetFont("Helvetica", "B", 10)
		pdf.CellFormat(content, 6, t(map[bool]string{true: "How to pay", false: "Como pagar"}[p.Lang == En]), "", 1, "L", false, 0, "")
		pdf.SetFont("Helvetica", "", 9)
		if p.Boleto != nil {
			pdf.MultiCell(content, 5, t("Boleto: "+p.Boleto.DigitableLine), "", "L", false)
		}
		if p.Pix != nil {
			pdf.MultiCell(content, 5, t("PIX: "+p.Pix.Code), "", "L", false)
		}
		if p.Inv.HostedInvoiceURL != nil {
			msg := "Pague com cartão, PIX ou boleto em: "
			if p.Lang == En {
				msg = "Pay by card, PIX or boleto at: "
			}
			pdf.MultiCell(content, 5, t(msg+*p.Inv.HostedInvoiceURL), "", "L", false)
		}
		if p.Inv.FineRate > 0 || p.Inv.InterestRate > 0 {
			pdf.MultiCell(content, 5, t(fmt.Sprintf(p.IT("late_terms"), p.Rate(p.Inv.FineRate), p.Rate(p.Inv.InterestRate))), "", "L", false)
		}
	}
	var buf bytes.Buffer
	if err := pdf.Output(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func docLine(p *InvoicePage) string {
	if d := Doc(p.Customer.Document); d != "" {
		return p.IT("doc") + ": " + d
	}
	return ""
}

func nonEmpty(xs ...string) []string {
	var out []string
	for _, x := range xs {
		if strings.TrimSpace(x) != "" {
			out = append(out, x)
		}
	}
	return out
}

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
