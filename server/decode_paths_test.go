package server

import (
	"testing"

	"github.com/matryer/is"

	"troco/server/core"
	"troco/server/domain"
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
