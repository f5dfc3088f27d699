package checkout

import (
	"errors"
	"fmt"
	"time"

	"troco/db"
	"troco/server/core"
	"troco/server/domain"
)

// maxTotal is the largest amount a session may charge (domain.ValidateAmount's ceiling).
const maxTotal int64 = 99_999_999_99

// cart is a session's line items resolved from prices, with the mode and amounts they imply.
type cart struct {
	Items    []domain.LineItem
	Mode     string
	Currency string
	Subtotal int64
	// Recurring is the common cycle of the recurring prices (subscription mode only).
	Recurring *domain.Recurring
	// TrialDays is the longest trial of the recurring prices; their first charge waits for it.
	TrialDays int
}

// resolveCart looks up every price of items in scope and freezes price and product as they
// are now. Amounts come from the prices only: a body never states an amount.
func resolveCart(tx *db.Tx, a domain.Actor, items []LineItemParams) (*cart, error) {
	s := a.Scope
	if len(items) == 0 {
		return nil, domain.Missing("line_items")
	}
	if len(items) > MaxLineItems {
		return nil, domain.Invalid("line_items", "line_items can have at most %d entries; got %d.", MaxLineItems, len(items))
	}
	c := &cart{Mode: domain.CheckoutModePayment}
	products := map[string]*domain.Product{}
	for i, it := range items {
		param := fmt.Sprintf("line_items[%d]", i)
		if it.PriceData != nil {
			if it.Price != "" {
				return nil, domain.Invalid(param+"[price_data]", "Give %s[price] or %s[price_data], not both.", param, param)
			}
		} else if it.Price == "" {
			return nil, domain.Missing(param + "[price]")
		}
		qty := int64(1)
		if it.Quantity != nil {
			qty = *it.Quantity
		}
		if qty < 1 || qty > MaxQuantity {
			return nil, domain.Invalid(param+"[quantity]", "quantity must be between 1 and %d.", MaxQuantity)
		}
		var price *domain.Price
		var err error
		if it.PriceData != nil {
			var prod *domain.Product
			if price, prod, err = core.CreateInlinePrice(tx, a, param+"[price_data]", it.PriceData); err != nil {
				return nil, err
			}
			products[price.Product] = prod
		} else {
			price, err = tx.FindPriceByID(s, it.Price)
			if errors.Is(err, db.ErrNotFound) {
				return nil, domain.NotFound(param+"[price]", "price", it.Price)
			}
			if err != nil {
				return nil, err
			}
			if !price.IsActive {
				return nil, domain.Invalid(param+"[price]", "Price %s is not active; activate it or use another price.", price.ID)
			}
		}
		prod, ok := products[price.Product]
		if !ok {
			prod, err = tx.FindProductByID(s, price.Product)
			if errors.Is(err, db.ErrNotFound) {
				return nil, domain.NotFound(param+"[price]", "product of price", price.ID)
			}
			if err != nil {
				return nil, err
			}
			products[price.Product] = prod
		}
		if !prod.IsActive && it.PriceData == nil {
			return nil, domain.Invalid(param+"[price]", "The product %s of price %s is not active.", prod.ID, price.ID)
		}
		if c.Currency == "" {
			c.Currency = price.Currency
		} else if price.Currency != c.Currency {
			return nil, domain.Invalid(param+"[price]", "Every line item must use the same currency; %s is %s, the first item %s.", price.ID, price.Currency, c.Currency)
		}
		if r := price.Recurring; r != nil {
			if c.Recurring == nil {
				rc := *r
				c.Recurring = &rc
			} else if r.Interval != c.Recurring.Interval || r.IntervalCount != c.Recurring.IntervalCount {
				return nil, domain.Invalid(param+"[price]", "Every recurring price of a session must share one billing cycle; %s bills every %d %s, an earlier item every %d %s.",
					price.ID, r.IntervalCount, r.Interval, c.Recurring.IntervalCount, c.Recurring.Interval)
			}
			if r.TrialPeriodDays != nil && *r.TrialPeriodDays > c.TrialDays {
				c.TrialDays = *r.TrialPeriodDays
			}
			c.Mode = domain.CheckoutModeSubscription
		}
		desc := prod.Name
		if price.Name != nil && *price.Name != "" {
			desc = prod.Name + " (" + *price.Name + ")"
		}
		c.Items = append(c.Items, domain.LineItem{
			ID: domain.NewID(domain.PrefixLineItem), Object: "line_item", Description: &desc,
			Price: *price, Product: *prod, Quantity: qty,
		})
	}
	for i := range c.Items {
		li := &c.Items[i]
		amount := li.Price.UnitAmount * li.Quantity
		if li.Price.Recurring != nil && c.TrialDays > 0 {
			// During a trial nothing of a recurring price is due now; the first charge is the renewal.
			amount = 0
		}
		li.SubtotalAmount, li.TotalAmount = amount, amount
		c.Subtotal += amount
		if c.Subtotal > maxTotal {
			return nil, domain.Invalid("line_items", "The session total exceeds the maximum of %d centavos.", maxTotal)
		}
	}
	return c, nil
}

// periodEnd returns the end of a billing period that starts at start: interval_count intervals
// later, as an absolute instant (SPEC 9.2). Months and years keep the day of the month, clamped
// to the last day of shorter months (31 January + 1 month = 28 or 29 February).
func periodEnd(start time.Time, r domain.Recurring) time.Time {
	n := max(r.IntervalCount, 1)
	switch r.Interval {
	case "day":
		return start.AddDate(0, 0, n)
	case "week":
		return start.AddDate(0, 0, 7*n)
	case "year":
		return addMonths(start, 12*n)
	default:
		return addMonths(start, n)
	}
}

func addMonths(t time.Time, n int) time.Time {
	t = t.UTC()
	y, m, d := t.Date()
	first := time.Date(y, m+time.Month(n), 1, t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), time.UTC)
	last := first.AddDate(0, 1, -1).Day()
	return first.AddDate(0, 0, min(d, last)-1)
}
