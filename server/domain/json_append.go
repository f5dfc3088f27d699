package domain

import (
	"slices"
	"strconv"
	"unicode/utf8"
)

// The hand-written encoders below write exactly the bytes MarshalJSON (encoding/json with HTML
// escaping off) writes for the objects every payment encodes in the single writer (its events'
// objects), without reflection. TestAppendJSONMatchesEncodingJSON compares them with
// encoding/json over many generated objects; a field added to PaymentIntent must be added here
// too (the test fails otherwise).

// appendJSONString appends s as encoding/json encodes a string: html escapes <, > and & (what
// json.Marshal does; MarshalJSON leaves them). This is encoding/json's appendString.
func appendJSONString(dst []byte, s string, html bool) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' && (!html || (b != '<' && b != '>' && b != '&')) {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[b>>4], hex[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		if c == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if c == '\u2028' || c == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[c&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

func appendJSONStringPtr(dst []byte, s *string) []byte {
	if s == nil {
		return append(dst, "null"...)
	}
	return appendJSONString(dst, *s, false)
}

func appendJSONBool(dst []byte, v bool) []byte {
	if v {
		return append(dst, "true"...)
	}
	return append(dst, "false"...)
}

// appendJSONTime is Time.MarshalJSON.
func appendJSONTime(dst []byte, t Time) []byte {
	if t.IsZero() {
		return append(dst, "null"...)
	}
	dst = append(dst, '"')
	dst = t.UTC().AppendFormat(dst, TimeLayout)
	return append(dst, '"')
}

// appendJSONMetadata is Metadata.MarshalJSON: {} when nil, else json.Marshal of the map (keys
// sorted, HTML characters escaped, as encoding/json's Marshaler path copies them).
func appendJSONMetadata(dst []byte, m Metadata) []byte {
	dst = append(dst, '{')
	if len(m) == 1 {
		for k, v := range m {
			dst = appendJSONString(dst, k, true)
			dst = append(dst, ':')
			dst = appendJSONString(dst, v, true)
		}
		return append(dst, '}')
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for i, k := range keys {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendJSONString(dst, k, true)
		dst = append(dst, ':')
		dst = appendJSONString(dst, m[k], true)
	}
	return append(dst, '}')
}

// appendJSONPaymentError encodes a PaymentError (null when nil).
func appendJSONPaymentError(dst []byte, e *PaymentError) []byte {
	if e == nil {
		return append(dst, "null"...)
	}
	dst = append(dst, `{"category":`...)
	dst = appendJSONString(dst, e.Category, false)
	dst = append(dst, `,"code":`...)
	dst = appendJSONString(dst, e.Code, false)
	dst = append(dst, `,"message":`...)
	dst = appendJSONString(dst, e.Message, false)
	dst = append(dst, `,"advice_code":`...)
	dst = appendJSONStringPtr(dst, e.AdviceCode)
	dst = append(dst, `,"network_decline_code":`...)
	dst = appendJSONStringPtr(dst, e.NetworkDeclineCode)
	dst = append(dst, `,"network_advice_code":`...)
	dst = appendJSONStringPtr(dst, e.NetworkAdviceCode)
	return append(dst, '}')
}

// AppendJSON appends what MarshalJSON(pi) returns. Only a PIX or boleto next_action goes
// through encoding/json.
func (pi *PaymentIntent) AppendJSON(dst []byte) ([]byte, error) {
	dst = append(dst, `{"id":`...)
	dst = appendJSONString(dst, pi.ID, false)
	dst = append(dst, `,"object":`...)
	dst = appendJSONString(dst, pi.Object, false)
	dst = append(dst, `,"amount":`...)
	dst = strconv.AppendInt(dst, pi.Amount, 10)
	dst = append(dst, `,"amount_capturable":`...)
	dst = strconv.AppendInt(dst, pi.AmountCapturable, 10)
	dst = append(dst, `,"amount_received":`...)
	dst = strconv.AppendInt(dst, pi.AmountReceived, 10)
	dst = append(dst, `,"canceled_at":`...)
	dst = appendJSONTime(dst, pi.CanceledAt)
	dst = append(dst, `,"cancellation_reason":`...)
	dst = appendJSONStringPtr(dst, pi.CancellationReason)
	dst = append(dst, `,"capture_method":`...)
	dst = appendJSONString(dst, pi.CaptureMethod, false)
	dst = append(dst, `,"client_secret":`...)
	dst = appendJSONString(dst, pi.ClientSecret, false)
	dst = append(dst, `,"created_at":`...)
	dst = appendJSONTime(dst, pi.CreatedAt)
	dst = append(dst, `,"currency":`...)
	dst = appendJSONString(dst, pi.Currency, false)
	dst = append(dst, `,"customer":`...)
	dst = appendJSONStringPtr(dst, pi.Customer)
	dst = append(dst, `,"description":`...)
	dst = appendJSONStringPtr(dst, pi.Description)
	dst = append(dst, `,"installments":`...)
	if pi.Installments == nil {
		dst = append(dst, "null"...)
	} else {
		dst = strconv.AppendInt(dst, int64(*pi.Installments), 10)
	}
	dst = append(dst, `,"interest_payer":`...)
	dst = appendJSONString(dst, pi.InterestPayer, false)
	dst = append(dst, `,"last_payment_error":`...)
	dst = appendJSONPaymentError(dst, pi.LastPaymentError)
	dst = append(dst, `,"latest_charge":`...)
	dst = appendJSONStringPtr(dst, pi.LatestCharge)
	dst = append(dst, `,"livemode":`...)
	dst = appendJSONBool(dst, pi.Livemode)
	dst = append(dst, `,"metadata":`...)
	dst = appendJSONMetadata(dst, pi.Metadata)
	dst = append(dst, `,"next_action":`...)
	dst, err := appendJSONPaymentData(dst, pi.NextAction)
	if err != nil {
		return nil, err
	}
	dst = append(dst, `,"payment_method":`...)
	dst = appendJSONStringPtr(dst, pi.PaymentMethod)
	dst = append(dst, `,"payment_method_type":`...)
	dst = appendJSONStringPtr(dst, pi.PaymentMethodType)
	dst = append(dst, `,"payment_method_types":`...)
	dst = appendJSONStrings(dst, pi.PaymentMethodTypes)
	dst = append(dst, `,"statement_descriptor":`...)
	dst = appendJSONStringPtr(dst, pi.StatementDescriptor)
	dst = append(dst, `,"status":`...)
	dst = appendJSONString(dst, pi.Status, false)
	dst = append(dst, `,"updated_at":`...)
	dst = appendJSONTime(dst, pi.UpdatedAt)
	return append(dst, '}'), nil
}

// appendJSONAddress encodes an Address (null when nil; number, line2 and neighborhood omitted
// when empty).
func appendJSONAddress(dst []byte, a *Address) []byte {
	if a == nil {
		return append(dst, "null"...)
	}
	dst = append(dst, `{"line1":`...)
	dst = appendJSONString(dst, a.Line1, false)
	if a.Number != "" {
		dst = append(dst, `,"number":`...)
		dst = appendJSONString(dst, a.Number, false)
	}
	if a.Line2 != "" {
		dst = append(dst, `,"line2":`...)
		dst = appendJSONString(dst, a.Line2, false)
	}
	if a.Neighborhood != "" {
		dst = append(dst, `,"neighborhood":`...)
		dst = appendJSONString(dst, a.Neighborhood, false)
	}
	dst = append(dst, `,"city":`...)
	dst = appendJSONString(dst, a.City, false)
	dst = append(dst, `,"state":`...)
	dst = appendJSONString(dst, a.State, false)
	dst = append(dst, `,"postal_code":`...)
	dst = appendJSONString(dst, a.PostalCode, false)
	dst = append(dst, `,"country":`...)
	dst = appendJSONString(dst, a.Country, false)
	return append(dst, '}')
}

// AppendJSON appends what MarshalJSON(b) returns.
func (b *BillingDetails) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"address":`...)
	dst = appendJSONAddress(dst, b.Address)
	dst = append(dst, `,"email":`...)
	dst = appendJSONStringPtr(dst, b.Email)
	dst = append(dst, `,"name":`...)
	dst = appendJSONStringPtr(dst, b.Name)
	dst = append(dst, `,"phone":`...)
	dst = appendJSONStringPtr(dst, b.Phone)
	dst = append(dst, `,"document":`...)
	dst = appendJSONStringPtr(dst, b.Document)
	dst = append(dst, `,"document_type":`...)
	dst = appendJSONStringPtr(dst, b.DocumentType)
	return append(dst, '}')
}

// appendJSONCardDetails encodes a card's payment_method_details.card.
func appendJSONCardDetails(dst []byte, c *CardDetails) []byte {
	dst = append(dst, `{"amount_authorized":`...)
	if c.AmountAuthorized == nil {
		dst = append(dst, "null"...)
	} else {
		dst = strconv.AppendInt(dst, *c.AmountAuthorized, 10)
	}
	dst = append(dst, `,"authorization_code":`...)
	dst = appendJSONStringPtr(dst, c.AuthorizationCode)
	dst = append(dst, `,"brand":`...)
	dst = appendJSONString(dst, c.Brand, false)
	dst = append(dst, `,"checks":{"address_line1_check":`...)
	dst = appendJSONString(dst, c.Checks.AddressLine1Check, false)
	dst = append(dst, `,"address_postal_code_check":`...)
	dst = appendJSONString(dst, c.Checks.AddressPostalCodeCheck, false)
	dst = append(dst, `,"cvc_check":`...)
	dst = appendJSONString(dst, c.Checks.CVCCheck, false)
	dst = append(dst, `},"country":`...)
	dst = appendJSONString(dst, c.Country, false)
	dst = append(dst, `,"exp_month":`...)
	dst = strconv.AppendInt(dst, int64(c.ExpMonth), 10)
	dst = append(dst, `,"exp_year":`...)
	dst = strconv.AppendInt(dst, int64(c.ExpYear), 10)
	dst = append(dst, `,"fingerprint":`...)
	dst = appendJSONString(dst, c.Fingerprint, false)
	dst = append(dst, `,"funding":`...)
	dst = appendJSONString(dst, c.Funding, false)
	dst = append(dst, `,"installments":`...)
	dst = strconv.AppendInt(dst, int64(c.Installments), 10)
	dst = append(dst, `,"last4":`...)
	dst = appendJSONString(dst, c.Last4, false)
	dst = append(dst, `,"network":`...)
	dst = appendJSONString(dst, c.Network, false)
	return append(dst, '}')
}

// AppendJSON appends what MarshalJSON(d) returns; the pix and boleto parts go through
// encoding/json.
func (d *PaymentMethodDetails) AppendJSON(dst []byte) ([]byte, error) {
	dst = append(dst, `{"type":`...)
	dst = appendJSONString(dst, d.Type, false)
	if d.Card != nil {
		dst = append(dst, `,"card":`...)
		dst = appendJSONCardDetails(dst, d.Card)
	}
	var err error
	if d.Pix != nil {
		if dst, err = appendMarshaled(dst, `,"pix":`, d.Pix); err != nil {
			return nil, err
		}
	}
	if d.Boleto != nil {
		if dst, err = appendMarshaled(dst, `,"boleto":`, d.Boleto); err != nil {
			return nil, err
		}
	}
	return append(dst, '}'), nil
}

// appendMarshaled appends name and v as MarshalJSON encodes it, through encoding/json (the parts
// without a hand-written encoder).
func appendMarshaled(dst []byte, name string, v any) ([]byte, error) {
	b, err := marshalJSON(v)
	if err != nil {
		return nil, err
	}
	return append(append(dst, name...), b...), nil
}

// AppendJSON appends what MarshalJSON(ch) returns. The refunds list goes through encoding/json.
func (ch *Charge) AppendJSON(dst []byte) ([]byte, error) {
	dst = append(dst, `{"id":`...)
	dst = appendJSONString(dst, ch.ID, false)
	dst = append(dst, `,"object":`...)
	dst = appendJSONString(dst, ch.Object, false)
	dst = append(dst, `,"amount":`...)
	dst = strconv.AppendInt(dst, ch.Amount, 10)
	dst = append(dst, `,"amount_captured":`...)
	dst = strconv.AppendInt(dst, ch.AmountCaptured, 10)
	dst = append(dst, `,"amount_refunded":`...)
	dst = strconv.AppendInt(dst, ch.AmountRefunded, 10)
	dst = append(dst, `,"billing_details":`...)
	dst = ch.BillingDetails.AppendJSON(dst)
	dst = append(dst, `,"captured":`...)
	dst = appendJSONBool(dst, ch.Captured)
	dst = append(dst, `,"created_at":`...)
	dst = appendJSONTime(dst, ch.CreatedAt)
	dst = append(dst, `,"currency":`...)
	dst = appendJSONString(dst, ch.Currency, false)
	dst = append(dst, `,"customer":`...)
	dst = appendJSONStringPtr(dst, ch.Customer)
	dst = append(dst, `,"description":`...)
	dst = appendJSONStringPtr(dst, ch.Description)
	dst = append(dst, `,"disputed":`...)
	dst = appendJSONBool(dst, ch.Disputed)
	dst = append(dst, `,"invoice":`...)
	dst = appendJSONStringPtr(dst, ch.Invoice)
	dst = append(dst, `,"livemode":`...)
	dst = appendJSONBool(dst, ch.Livemode)
	dst = append(dst, `,"metadata":`...)
	dst = appendJSONMetadata(dst, ch.Metadata)
	dst = append(dst, `,"paid":`...)
	dst = appendJSONBool(dst, ch.Paid)
	dst = append(dst, `,"payment_error":`...)
	dst = appendJSONPaymentError(dst, ch.PaymentError)
	dst = append(dst, `,"payment_intent":`...)
	dst = appendJSONString(dst, ch.PaymentIntent, false)
	dst = append(dst, `,"payment_method":`...)
	dst = appendJSONStringPtr(dst, ch.PaymentMethod)
	dst = append(dst, `,"payment_method_details":`...)
	dst, err := ch.PaymentMethodDetails.AppendJSON(dst)
	if err != nil {
		return nil, err
	}
	dst = append(dst, `,"receipt_url":`...)
	dst = appendJSONStringPtr(dst, ch.ReceiptURL)
	dst = append(dst, `,"refunded":`...)
	dst = appendJSONBool(dst, ch.Refunded)
	dst = append(dst, `,"refunds":`...)
	if ch.Refunds.Data == nil && ch.Refunds.Object == "" && !ch.Refunds.HasMore && ch.Refunds.URL == "" {
		dst = append(dst, `{"object":"","data":null,"has_more":false,"url":""}`...)
	} else {
		b, err := marshalJSON(ch.Refunds)
		if err != nil {
			return nil, err
		}
		dst = append(dst, b...)
	}
	dst = append(dst, `,"status":`...)
	dst = appendJSONString(dst, ch.Status, false)
	dst = append(dst, `,"updated_at":`...)
	dst = appendJSONTime(dst, ch.UpdatedAt)
	return append(dst, '}'), nil
}

// appendJSONStrings encodes a []string (null when nil).
func appendJSONStrings(dst []byte, ss []string) []byte {
	if ss == nil {
		return append(dst, "null"...)
	}
	dst = append(dst, '[')
	for i, s := range ss {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendJSONString(dst, s, false)
	}
	return append(dst, ']')
}

// appendJSONPaymentCard encodes a saved card (null when nil).
func appendJSONPaymentCard(dst []byte, c *PaymentCard) []byte {
	if c == nil {
		return append(dst, "null"...)
	}
	dst = append(dst, `{"brand":`...)
	dst = appendJSONString(dst, c.Brand, false)
	dst = append(dst, `,"country":`...)
	dst = appendJSONString(dst, c.Country, false)
	dst = append(dst, `,"exp_month":`...)
	dst = strconv.AppendInt(dst, int64(c.ExpMonth), 10)
	dst = append(dst, `,"exp_year":`...)
	dst = strconv.AppendInt(dst, int64(c.ExpYear), 10)
	dst = append(dst, `,"fingerprint":`...)
	dst = appendJSONString(dst, c.Fingerprint, false)
	dst = append(dst, `,"funding":`...)
	dst = appendJSONString(dst, c.Funding, false)
	dst = append(dst, `,"last4":`...)
	dst = appendJSONString(dst, c.Last4, false)
	dst = append(dst, `,"network":`...)
	dst = appendJSONString(dst, c.Network, false)
	return append(dst, '}')
}

// appendJSONPaymentData encodes a PaymentData (null when nil); the pix and boleto parts go
// through encoding/json.
func appendJSONPaymentData(dst []byte, d *PaymentData) ([]byte, error) {
	if d == nil {
		return append(dst, "null"...), nil
	}
	dst = append(dst, `{"type":`...)
	dst = appendJSONString(dst, d.Type, false)
	var err error
	if d.Pix != nil {
		if dst, err = appendMarshaled(dst, `,"pix":`, d.Pix); err != nil {
			return nil, err
		}
	}
	if d.Boleto != nil {
		if dst, err = appendMarshaled(dst, `,"boleto":`, d.Boleto); err != nil {
			return nil, err
		}
	}
	if c := d.CreditCard; c != nil {
		dst = append(dst, `,"credit_card":{"brand":`...)
		dst = appendJSONString(dst, c.Brand, false)
		dst = append(dst, `,"last4":`...)
		dst = appendJSONString(dst, c.Last4, false)
		dst = append(dst, `,"installments":`...)
		dst = strconv.AppendInt(dst, int64(c.Installments), 10)
		dst = append(dst, '}')
	}
	return append(dst, '}'), nil
}
