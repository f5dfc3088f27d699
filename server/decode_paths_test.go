package server

import (
	"testing"

	"github.com/matryer/is"

	"troco/server/billing"
	"troco/server/checkout"
	"troco/server/core"
	"troco/server/domain"
	"troco/server/invoices"
	"troco/server/payments"
)

func TestDecodeNamesNestedUnknownFields(t *testing.T) {
	for _, tc := range []struct {
		body, param string
		dst         any
	}{
		{`{"address":{"line1":"x","zip":"1"}}`, "address[zip]", &core.CustomerParams{}},
		{`{"emial":"a@b.co"}`, "emial", &core.CustomerParams{}},
		{`{"product":"prod_1","unit_amount":1,"recurring":{"interval":"month","foo":1}}`, "recurring[foo]", &core.PriceParams{}},
		{`{"name":"x","default_price_data":{"unit_amount":1,"bar":true}}`, "default_price_data[bar]", &core.ProductParams{}},
	} {
		t.Run(tc.param, func(t *testing.T) {
			is := is.New(t)
			err := decodeJSON([]byte(tc.body), tc.dst)
			e, ok := domain.AsError(err)
			is.True(ok)                 // a typed API error
			is.Equal(e.Status, 400)     // unknown fields are a 400
			is.Equal(e.Param, tc.param) // naming the full parameter path
		})
	}
}

// nestedArrays has an array of objects inside an object inside an array, deeper than any body
// of the API today, so the decoder's paths are checked at any depth.
type nestedArrays struct {
	Orders []struct {
		Shipment struct {
			Packages []struct {
				Weight int64             `json:"weight"`
				Tags   []string          `json:"tags"`
				Labels map[string]string `json:"labels"`
			} `json:"packages"`
		} `json:"shipment"`
	} `json:"orders"`
}

// TestDecodeNamesFullParamPaths: wrong types and unknown fields are named with their full path,
// array indices included (Stripe's line_items[0][quantity]), and the message names the same param.
func TestDecodeNamesFullParamPaths(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		dst        any
		param, msg string // msg "" means the body is valid
	}{
		{"top-level wrong type", `{"email":5}`, &core.CustomerParams{}, "email", "Invalid type for email: expected a string."},
		{"top-level unknown field", `{"emial":"a@b.co"}`, &core.CustomerParams{}, "emial", "Received unknown parameter: emial."},
		{"nested object wrong type", `{"recurring":{"interval":"month","interval_count":"two"}}`, &core.PriceParams{}, "recurring[interval_count]", "Invalid type for recurring[interval_count]: expected an integer."},
		{"nested object not an object", `{"address":"Rua A"}`, &core.CustomerParams{}, "address", "Invalid type for address: expected an object."},
		{"field of an embedded struct", `{"line_items":[],"branding":"x"}`, &checkout.SessionParams{}, "branding", "Invalid type for branding: expected an object."},
		{"metadata value wrong type", `{"metadata":{"order":1}}`, &checkout.SessionParams{}, "metadata[order]", "Invalid type for metadata[order]: expected a string."},
		{"optional metadata value wrong type", `{"metadata":{"order":1}}`, &invoices.UpdateParams{}, "metadata[order]", "Invalid type for metadata[order]: expected a string."},
		{"array element wrong type", `{"line_items":[{"price":"price_x","quantity":"two"}]}`, &checkout.SessionParams{}, "line_items[0][quantity]", "Invalid type for line_items[0][quantity]: expected an integer."},
		{"second array element wrong type", `{"line_items":[{"price":"price_x","quantity":1},{"price":"price_y","quantity":1.5}]}`, &checkout.SessionParams{}, "line_items[1][quantity]", "Invalid type for line_items[1][quantity]: expected an integer."},
		{"array element not an object", `{"line_items":[{"price":"price_x"},"price_y"]}`, &checkout.SessionParams{}, "line_items[1]", "Invalid type for line_items[1]: expected an object."},
		{"array not an array", `{"line_items":{"price":"price_x"}}`, &checkout.SessionParams{}, "line_items", "Invalid type for line_items: expected an array."},
		{"scalar array element wrong type", `{"line_items":[],"payment_method_types":["card",1]}`, &checkout.SessionParams{}, "payment_method_types[1]", "Invalid type for payment_method_types[1]: expected a string."},
		{"array element unknown field", `{"line_items":[{"price":"price_x","quantity":1},{"price":"price_y","qty":2}]}`, &checkout.SessionParams{}, "line_items[1][qty]", "Received unknown parameter: line_items[1][qty]."},
		{"invoice line unknown field", `{"lines":[{"amount":100,"description":"x","tax":1}]}`, &invoices.UpdateParams{}, "lines[0][tax]", "Received unknown parameter: lines[0][tax]."},
		{"array in object in array, wrong type", `{"orders":[{},{"shipment":{"packages":[{"weight":1},{"weight":"heavy"}]}}]}`, &nestedArrays{}, "orders[1][shipment][packages][1][weight]", "Invalid type for orders[1][shipment][packages][1][weight]: expected an integer."},
		{"array in object in array, unknown field", `{"orders":[{"shipment":{"packages":[{"weight":1,"colour":"red"}]}}]}`, &nestedArrays{}, "orders[0][shipment][packages][0][colour]", "Received unknown parameter: orders[0][shipment][packages][0][colour]."},
		{"array in object in array, scalar element", `{"orders":[{"shipment":{"packages":[{"tags":["a",true]}]}}]}`, &nestedArrays{}, "orders[0][shipment][packages][0][tags][1]", "Invalid type for orders[0][shipment][packages][0][tags][1]: expected a string."},
		{"map in array in object in array", `{"orders":[{"shipment":{"packages":[{"labels":{"to":false}}]}}]}`, &nestedArrays{}, "orders[0][shipment][packages][0][labels][to]", "Invalid type for orders[0][shipment][packages][0][labels][to]: expected a string."},
		{"custom decoder's field", `{"payment_method_type":"credit_card","card":{"number":"4242424242424242","exp_month":"ab"}}`, &payments.ConfirmParams{}, "card[exp_month]", "Invalid type for card[exp_month]: expected an integer."},
		{"custom decoder's unknown field", `{"payment_method_type":"credit_card","card":{"pin":"1234"}}`, &payments.ConfirmParams{}, "card[pin]", "Received unknown parameter: card[pin]."},
		{"first error in document order", `{"zz":1,"address":{"foo":1}}`, &core.CustomerParams{}, "zz", "Received unknown parameter: zz."},
		{"wrong type before unknown field", `{"line_items":[{"quantity":"x"},{"qty":1}]}`, &checkout.SessionParams{}, "line_items[0][quantity]", "Invalid type for line_items[0][quantity]: expected an integer."},
		{"valid body", `{"line_items":[{"price":"price_x","quantity":2}],"payment_method_types":["pix"],"metadata":{"a":"b"}}`, &checkout.SessionParams{}, "", ""},
		{"valid nested arrays", `{"orders":[{"shipment":{"packages":[{"weight":1,"tags":["a"],"labels":{"to":"x"}}]}}]}`, &nestedArrays{}, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			err := decodeJSON([]byte(tc.body), tc.dst)
			if tc.msg == "" {
				is.NoErr(err) // a valid body decodes
				return
			}
			e, ok := domain.AsError(err)
			is.True(ok)                         // a typed API error
			is.Equal(e.Status, 400)             // a 400
			is.Equal(e.Code, "invalid_request") // invalid_request
			is.Equal(e.Param, tc.param)         // naming the full parameter path
			is.Equal(e.Message, tc.msg)         // and the same path in the message
		})
	}
	is := is.New(t)
	var p checkout.SessionParams
	is.NoErr(decodeJSON([]byte(`{"line_items":[{"price":"price_x","quantity":2}]}`), &p))
	is.Equal(len(p.LineItems), 1)
	is.Equal(*p.LineItems[0].Quantity, int64(2)) // the valid body's values are decoded
	is.Equal(p.LineItems[0].Price, "price_x")
}

// TestDecodeKeysAreExact: encoding/json would fill amount from "Amount" (or from "amount" spelt
// with the long s, which folds to s); the API's parameter names are exact, so such a key is an
// unknown parameter, at any depth and inside the card object. Metadata keys are data: kept as sent.
func TestDecodeKeysAreExact(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		dst        any
		param      string // "" means the body decodes
	}{
		{"capitalised top-level", `{"Email":"a@b.co"}`, &core.CustomerParams{}, "Email"},
		{"upper case top-level", `{"amount":100,"CURRENCY":"brl"}`, &payments.IntentParams{}, "CURRENCY"},
		{"nested", `{"address":{"Line1":"x"}}`, &core.CustomerParams{}, "address[Line1]"},
		{"nested twice", `{"product":"prod_1","unit_amount":1,"recurring":{"Interval":"month"}}`, &core.PriceParams{}, "recurring[Interval]"},
		{"inside the card", `{"payment_method_type":"credit_card","card":{"number":"4111111111111111","Cvc":"123"}}`, &payments.ConfirmParams{}, "card[Cvc]"},
		{"in an array", `{"items":[{"price":"price_1"},{"Price":"price_2"}]}`, &billing.CreateParams{}, "items[1][Price]"},
		{"long s folds to s", "{\"amount\":100,\"currency\":\"brl\",\"de\u017fcription\":\"x\"}", &payments.IntentParams{}, "de\u017fcription"},
		{"metadata keys are data", `{"amount":100,"currency":"brl","metadata":{"OrderID":"A1"}}`, &payments.IntentParams{}, ""},
		{"capitals in values only", `{"name":"ACME Ltda","email":"A@B.CO"}`, &core.CustomerParams{}, ""},
		{"capital sent as an escape", `{"\u0041mount":100,"currency":"brl"}`, &payments.IntentParams{}, "Amount"},
		{"escaped lower-case key", `{"\u0065mail":"a@b.co","name":"Zé"}`, &core.CustomerParams{}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			err := decodeJSON([]byte(tc.body), tc.dst)
			if tc.param == "" {
				is.NoErr(err)
				return
			}
			e, ok := domain.AsError(err)
			is.True(ok)                 // a typed API error
			is.Equal(e.Status, 400)     // an unknown parameter
			is.Equal(e.Param, tc.param) // named as sent
			is.Equal(e.Message, "Received unknown parameter: "+tc.param+".")
		})
	}
}

// TestMayFoldKeys: the walk of TestDecodeKeysAreExact runs only for a body with a key that has a
// capital, an escape or a non-ASCII byte; capitals in values alone do not start it.
func TestMayFoldKeys(t *testing.T) {
	is := is.New(t)
	is.True(!mayFoldKeys([]byte(`{"amount":100,"description":"Pedido ÁB \"X\": Y","metadata":{"order_id":"A:B"}}`)))
	is.True(mayFoldKeys([]byte(`{"amount":100,"metadata":{"OrderID":"1"}}`)))
	is.True(mayFoldKeys([]byte(`{"Amount" : 100}`)))
	is.True(mayFoldKeys([]byte(`{"\u0061mount":100}`)))
	is.True(mayFoldKeys([]byte(`{"deſcription":"x"}`)))
	is.True(!mayFoldKeys([]byte(`["A","B"]`)))
}
