package pages

import (
	"time"

	"troco/server/domain"
)

// invoiceStatusLabels are the labels of an invoice's status as its customer sees it, on the
// hosted invoice page and in the customer portal.
var invoiceStatusLabels = map[string][2]string{
	"open":    {"Em aberto", "Open"},
	"overdue": {"Vencida", "Overdue"},
	"paid":    {"Paga", "Paid"},
	"void":    {"Cancelada", "Void"},
}

// InvoiceStatus is the one rule for an invoice's status as its customer sees it (the hosted
// invoice page, the portal's list): paid, void, overdue once an invoice still owed (open or
// uncollectible) is past its due instant at now, else open. It returns the label in l and the
// badge's class suffix.
func InvoiceStatus(l Lang, inv *domain.Invoice, now time.Time) (label, class string) {
	switch {
	case inv.Status == domain.InvoicePaid:
		class = "paid"
	case inv.Status == domain.InvoiceVoid:
		class = "void"
	case !inv.DueDate.IsZero() && now.After(inv.DueDate.Time):
		class = "overdue"
	default:
		class = "open"
	}
	m := invoiceStatusLabels[class]
	if l == En {
		return m[1], class
	}
	return m[0], class
}
