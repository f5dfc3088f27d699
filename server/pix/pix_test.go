package pix

import (
	"bytes"
	"errors"
	"image/png"
	"strings"
	"testing"

	"github.com/matryer/is"
)

// manualExample is the static BR Code of the BCB manual (BR-STANDARDS.md), CRC included.
const manualExample = "00020126580014br.gov.bcb.pix0136123e4567-e12b-12d1-a456-426655440000520400005303986" +
	"5802BR5913Fulano de Tal6008BRASILIA62070503***6304" + "1D3D"

func TestCRC16(t *testing.T) {
	tests := []struct {
		name string
		data string
		want uint16
	}{
		{"check value", "123456789", 0x29B1},
		{"manual static example", strings.TrimSuffix(manualExample, "1D3D"), 0x1D3D},
		{"empty", "", 0xFFFF},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			is := is.New(t)
			is.Equal(CRC16([]byte(tt.data)), tt.want) // CRC-16/CCITT-FALSE
		})
	}
}

func TestEncodeManualExample(t *testing.T) {
	is := is.New(t)
	got, err := Payload{
		Key:          "123e4567-e12b-12d1-a456-426655440000",
		MerchantName: "Fulano de Tal",
		MerchantCity: "BRASILIA",
	}.Encode()
	is.NoErr(err)                   // encode manual example
	is.Equal(got, manualExample)    // byte-for-byte the manual's code
	is.NoErr(Verify(manualExample)) // the manual's code verifies
}

func TestEncode(t *testing.T) {
	tests := []struct {
		name     string
		payload  Payload
		contains []string // fragments the code must contain
		want     Code     // fields Parse must return (Fields and CRC ignored)
	}{
		{
			name: "dynamic single use with amount",
			payload: Payload{
				MerchantName: "Padaria São João Ltda", MerchantCity: "São Paulo",
				URL: "https://pix.troco.example/v2/cobv/abc123", Amount: 12399,
				TxID: "pi123", SingleUse: true,
			},
			contains: []string{"000201010212", "0014br.gov.bcb.pix2532pix.troco.example/v2/cobv/abc123", "5406123.99", "5921Padaria Sao Joao Ltda", "6009Sao Paulo", "62090505pi123", "6304"},
			want: Code{SingleUse: true, URL: "pix.troco.example/v2/cobv/abc123", Amount: 12399,
				MerchantName: "Padaria Sao Joao Ltda", MerchantCity: "Sao Paulo", TxID: "pi123"},
		},
		{
			name:     "one real",
			payload:  Payload{MerchantName: "Loja", MerchantCity: "Recife", Key: "+5581999990000", Amount: 100},
			contains: []string{"54041.00", "62070503***"},
			want:     Code{Key: "+5581999990000", Amount: 100, MerchantName: "Loja", MerchantCity: "Recife", TxID: "***"},
		},
		{
			name: "name and city truncated, accents stripped",
			payload: Payload{MerchantName: "Comércio de Alimentos Açaí da Amazônia", MerchantCity: "Florianópolis do Sul",
				Key: "loja@example.com", Description: "Pedido nº 42", Amount: 5},
			contains: []string{"5925Comercio de Alimentos Aca", "6015Florianopolis d", "0212Pedido no 42", "54040.05"},
			want: Code{Key: "loja@example.com", Description: "Pedido no 42", Amount: 5,
				MerchantName: "Comercio de Alimentos Aca", MerchantCity: "Florianopolis d", TxID: "***"},
		},
		{
			name:     "large amount",
			payload:  Payload{MerchantName: "X", MerchantCity: "Y", Key: "k", Amount: 999999999999, TxID: TxID("pi_abc")},
			contains: []string{"54139999999999.99", "62290525" + "00000000000000000000piabc"},
			want:     Code{Key: "k", Amount: 999999999999, MerchantName: "X", MerchantCity: "Y", TxID: "00000000000000000000piabc"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			is := is.New(t)
			code, err := tt.payload.Encode()
			is.NoErr(err) // encode
			for _, frag := range tt.contains {
				is.True(strings.Contains(code, frag)) // code contains fragment
			}
			c, err := Parse(code)
			is.NoErr(err) // parse own code
			is.Equal(c.CRC, code[len(code)-4:])
			c.Fields, c.CRC = nil, ""
			is.Equal(c, tt.want) // parsed fields match
		})
	}
}

func TestEncodeErrors(t *testing.T) {
	long := strings.Repeat("a", 60)
	tests := []struct {
		name    string
		payload Payload
	}{
		{"no name", Payload{MerchantCity: "Recife", Key: "k"}},
		{"name only accents dropped", Payload{MerchantName: "中文", MerchantCity: "Recife", Key: "k"}},
		{"no city", Payload{MerchantName: "Loja", Key: "k"}},
		{"no key or URL", Payload{MerchantName: "Loja", MerchantCity: "Recife"}},
		{"key and URL", Payload{MerchantName: "Loja", MerchantCity: "Recife", Key: "k", URL: "a.example/v2/x"}},
		{"http URL", Payload{MerchantName: "Loja", MerchantCity: "Recife", URL: "http://a.example/v2/x"}},
		{"key with space", Payload{MerchantName: "Loja", MerchantCity: "Recife", Key: "a b"}},
		{"key too long", Payload{MerchantName: "Loja", MerchantCity: "Recife", Key: strings.Repeat("k", 78)}},
		{"template 26 over 99", Payload{MerchantName: "Loja", MerchantCity: "Recife", Key: long, Description: "descricao longa demais"}},
		{"txid with underscore", Payload{MerchantName: "Loja", MerchantCity: "Recife", Key: "k", TxID: "pi_1"}},
		{"txid too long", Payload{MerchantName: "Loja", MerchantCity: "Recife", Key: "k", TxID: strings.Repeat("a", 26)}},
		{"negative amount", Payload{MerchantName: "Loja", MerchantCity: "Recife", Key: "k", Amount: -1}},
		{"amount over 13 characters", Payload{MerchantName: "Loja", MerchantCity: "Recife", Key: "k", Amount: 1000000000000}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			is := is.New(t)
			_, err := tt.payload.Encode()
			is.True(errors.Is(err, ErrInvalidPayload)) // rejected as invalid payload
		})
	}
}

func TestTemplateLimitBoundary(t *testing.T) {
	is := is.New(t)
	// 0014br.gov.bcb.pix (18) + 01LL key (4+n) = 99 when n = 77.
	_, err := Payload{MerchantName: "Loja", MerchantCity: "Recife", Key: strings.Repeat("k", 77)}.Encode()
	is.NoErr(err) // template 26 of exactly 99 is accepted
	_, err = Payload{MerchantName: "Loja", MerchantCity: "Recife", Key: strings.Repeat("k", 77), Description: "x"}.Encode()
	is.True(errors.Is(err, ErrInvalidPayload)) // one more sub-field exceeds 99
}

func TestParseErrors(t *testing.T) {
	body := strings.TrimSuffix(manualExample, "1D3D")
	withCRC := func(s string) string { return s + fmtCRC(s) }
	tests := []struct {
		name string
		code string
		want error
	}{
		{"wrong CRC", body + "1D3E", ErrCRCMismatch},
		{"lower-case CRC", strings.Replace(manualExample, "1D3D", "1d3d", 1), ErrInvalidCode},
		{"altered amount keeps old CRC", strings.Replace(manualExample, "Fulano", "Fulana", 1), ErrCRCMismatch},
		{"empty", "", ErrInvalidCode},
		{"truncated", manualExample[:30], ErrInvalidCode},
		{"no CRC field", "000201", ErrInvalidCode},
		{"non-ASCII", strings.Replace(manualExample, "Fulano", "Fulanó", 1), ErrInvalidCode},
		{"length overruns", withCRC("000201269900"), ErrInvalidCode},
		{"bad format indicator", withCRC(strings.Replace(body, "000201", "000202", 1)), ErrInvalidCode},
		{"wrong GUI", withCRC(strings.Replace(body, "br.gov.bcb.pix", "br.gov.bcb.pax", 1)), ErrInvalidCode},
		{"wrong currency", withCRC(strings.Replace(body, "5303986", "5303840", 1)), ErrInvalidCode},
		{"wrong country", withCRC(strings.Replace(body, "5802BR", "5802US", 1)), ErrInvalidCode},
		{"bad point of initiation", withCRC(strings.Replace(body, "000201", "000201010213", 1)), ErrInvalidCode},
		{"no additional data", withCRC(strings.Replace(body, "62070503***", "", 1)), ErrInvalidCode},
		{"bad txid", withCRC(strings.Replace(body, "62070503***", "62070503a_b", 1)), ErrInvalidCode},
		{"bad amount", withCRC(strings.Replace(body, "5802BR", "54031,05802BR", 1)), ErrInvalidCode},
		{"duplicate field", withCRC(strings.Replace(body, "5802BR", "5802BR5802BR", 1)), ErrInvalidCode},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			is := is.New(t)
			err := Verify(tt.code)
			is.True(errors.Is(err, tt.want)) // rejected for the expected reason
		})
	}
}

func TestParseAmount(t *testing.T) {
	tests := []struct {
		in   string
		want int64
	}{
		{"123.99", 12399}, {"1.00", 100}, {"5", 500}, {"0.5", 50}, {"0.05", 5},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			is := is.New(t)
			got, err := parseAmount(tt.in)
			is.NoErr(err) // parse amount
			is.Equal(got, tt.want)
		})
	}
	for _, bad := range []string{"", ".5", "1.", "1.234", "1,00", "-1", "12345678901234"} {
		t.Run("bad "+bad, func(t *testing.T) {
			is := is.New(t)
			_, err := parseAmount(bad)
			is.True(errors.Is(err, ErrInvalidCode)) // malformed amount
		})
	}
}

func TestFormatAmount(t *testing.T) {
	tests := []struct {
		in   int64
		want string
	}{
		{12399, "123.99"}, {100, "1.00"}, {1, "0.01"}, {10, "0.10"}, {0, "0.00"},
	}
	for _, tt := range tests {
		is := is.New(t)
		is.Equal(FormatAmount(tt.in), tt.want) // dot decimal from centavos
	}
}

func TestTxID(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"pi_3MtwBwLkdIwHu7ix28a3tqPa", "i3MtwBwLkdIwHu7ix28a3tqPa"},
		{"pi_abc", "00000000000000000000piabc"},
		{"", "0000000000000000000000000"},
		{"ção-123", "000000000000000000000o123"}, // multi-byte letters are dropped, not transliterated
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			is := is.New(t)
			got := TxID(tt.in)
			is.Equal(got, tt.want)
			is.Equal(len(got), MaxTxID)  // always 25
			is.True(isAlphanumeric(got)) // always [A-Za-z0-9]
		})
	}
}

func TestQRPNG(t *testing.T) {
	tests := []struct {
		name string
		size int
	}{
		{"256", 256},
		{"512", 512},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			is := is.New(t)
			b, err := QRPNG(manualExample, tt.size)
			is.NoErr(err) // render QR
			img, err := png.Decode(bytes.NewReader(b))
			is.NoErr(err) // output is a PNG
			r := img.Bounds()
			is.Equal(r.Dx(), r.Dy())  // square
			is.Equal(r.Dx(), tt.size) // requested size
		})
	}
	for _, size := range []int{0, -4, MaxQRSize + 1} {
		is := is.New(t)
		_, err := QRPNG(manualExample, size)
		is.True(err != nil) // size out of range
	}
	is := is.New(t)
	_, err := QRPNG("", 256)
	is.True(err != nil) // empty content
}

// fmtCRC returns the upper-case hex CRC of s, for building test codes.
func fmtCRC(s string) string {
	const hex = "0123456789ABCDEF"
	c := CRC16([]byte(s))
	return string([]byte{hex[c>>12], hex[c>>8&0xF], hex[c>>4&0xF], hex[c&0xF]})
}
