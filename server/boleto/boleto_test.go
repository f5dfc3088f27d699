package boleto

import (
	"encoding/xml"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"
)

// The FEBRABAN worked example from BR-STANDARDS.md.
const (
	exampleLine    = "23793.38128 60007.827136 95000.063305 9 75520000370000"
	exampleDigits  = "23793381286000782713695000063305975520000370000"
	exampleBarcode = "23799755200003700003381260007827139500006330"
)

func TestWorkedExample(t *testing.T) {
	is := is.New(t)

	bc, err := BarcodeFromLine(exampleLine)
	is.NoErr(err)                // line to barcode
	is.Equal(bc, exampleBarcode) // line → barcode

	line, err := DigitableLine(exampleBarcode)
	is.NoErr(err)                 // barcode to line
	is.Equal(line, exampleDigits) // barcode → 47 digits

	formatted, err := FormatLine(line)
	is.NoErr(err)                    // format line
	is.Equal(formatted, exampleLine) // printed form

	bc, err = BarcodeFromLine(exampleDigits)
	is.NoErr(err) // digits-only line is accepted too
	is.Equal(bc, exampleBarcode)

	f, err := ParseBarcode(exampleBarcode)
	is.NoErr(err) // split barcode
	is.Equal(f, Fields{Bank: "237", Factor: 7552, Amount: 370000, FreeField: "3381260007827139500006330"})

	// Building it from its parts gives the same barcode, in either factor cycle.
	for _, due := range []Date{{2018, time.June, 11}, {2043, time.January, 31}} {
		got, err := Barcode("237", due, 370000, "3381260007827139500006330")
		is.NoErr(err) // build example barcode
		is.Equal(got, exampleBarcode)
	}
}

func TestValidateBarcode(t *testing.T) {
	tests := []struct {
		name      string
		barcode   string
		wantCheck Check // empty when a format error is expected
	}{
		{"general DV changed", "23798755200003700003381260007827139500006330", CheckGeneral},
		{"value digit changed", "23799755200003700013381260007827139500006330", CheckGeneral},
		{"free field digit changed", "23799755200003700003381260007827139500006331", CheckGeneral},
		{"short", exampleBarcode[:43], ""},
		{"letters", strings.Replace(exampleBarcode, "3", "x", 1), ""},
		{"other currency", "23709755200003700003381260007827139500006330", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			is := is.New(t)
			err := ValidateBarcode(tt.barcode)
			var ce *CheckDigitError
			if tt.wantCheck == "" {
				is.True(errors.Is(err, ErrFormat)) // malformed barcode
				return
			}
			is.True(errors.As(err, &ce))     // check digit error
			is.Equal(ce.Check, tt.wantCheck) // names the failing check
			is.True(ce.Got != ce.Want)       // reports both digits
		})
	}
	is := is.New(t)
	is.NoErr(ValidateBarcode(exampleBarcode)) // example is valid
}

func TestValidateLine(t *testing.T) {
	tests := []struct {
		name      string
		line      string
		wantCheck Check
	}{
		{"field 1 data", "23793.38138 60007.827136 95000.063305 9 75520000370000", CheckField1},
		{"field 1 DV", "23793.38129 60007.827136 95000.063305 9 75520000370000", CheckField1},
		{"field 2 data", "23793.38128 60007.827236 95000.063305 9 75520000370000", CheckField2},
		{"field 2 DV", "23793.38128 60007.827130 95000.063305 9 75520000370000", CheckField2},
		{"field 3 data", "23793.38128 60007.827136 95000.163305 9 75520000370000", CheckField3},
		{"field 3 DV", "23793.38128 60007.827136 95000.063304 9 75520000370000", CheckField3},
		{"general DV", "23793.38128 60007.827136 95000.063305 8 75520000370000", CheckGeneral},
		{"amount changed", "23793.38128 60007.827136 95000.063305 9 75520000370001", CheckGeneral},
		{"factor changed", "23793.38128 60007.827136 95000.063305 9 75530000370000", CheckGeneral},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			is := is.New(t)
			err := ValidateLine(tt.line)
			var ce *CheckDigitError
			is.True(errors.As(err, &ce))     // check digit error
			is.Equal(ce.Check, tt.wantCheck) // names the failing check
			is.True(ce.Got != ce.Want)
		})
	}
	for _, bad := range []string{"", exampleDigits[:46], exampleDigits + "0", "23793-38128 60007.827136 95000.063305 9 75520000370000"} {
		is := is.New(t)
		is.True(errors.Is(ValidateLine(bad), ErrFormat)) // malformed line
	}
	is := is.New(t)
	is.NoErr(ValidateLine(exampleLine)) // example is valid
}

func TestMod10(t *testing.T) {
	tests := []struct {
		digits string
		want   int
	}{
		{"237933812", 8},
		{"6000782713", 6},
		{"9500006330", 5},
		{"0", 0},
		{"5", 9},  // 5×2 = 10 → 1+0 = 1 → 10 − 1
		{"19", 0}, // 9×2 = 18 → 9, plus 1 = 10 → 0
	}
	for _, tt := range tests {
		is := is.New(t)
		is.Equal(mod10(tt.digits), tt.want) // field DV
	}
}

func TestGeneralDVMapsToOne(t *testing.T) {
	is := is.New(t)
	// Search free fields until 11 − (sum mod 11) has been both 10 and 11 (0 cannot happen);
	// both must produce DV 1, and every barcode must validate.
	seen := map[int]bool{}
	for i := 0; len(seen) < 2 && i < 10000; i++ {
		ff := FreeField(string(rune('a'+i%26)) + strings.Repeat("x", i/26))
		bc, err := Barcode(BankCode, Date{2026, 3, 1}, 1000, ff)
		is.NoErr(err) // build
		is.NoErr(ValidateBarcode(bc))
		sum, w := 0, 2
		body := bc[:4] + bc[5:]
		for j := len(body) - 1; j >= 0; j-- {
			sum += int(body[j]-'0') * w
			if w++; w > 9 {
				w = 2
			}
		}
		if r := 11 - sum%11; r == 10 || r == 11 {
			seen[r] = true
			is.Equal(bc[4], byte('1')) // 0, 10, 11 become 1
		}
	}
	is.Equal(len(seen), 2) // both 10 and 11 reached
}

func TestDueFactor(t *testing.T) {
	tests := []struct {
		date string
		want int
	}{
		{"2000-07-03", 1000},
		{"2000-07-04", 1001},
		{"2018-06-11", 7552},
		{"2025-02-21", 9999},
		{"2025-02-22", 1000},
		{"2025-02-23", 1001},
		{"2043-01-31", 7552},
		{"2049-10-13", 9999},
	}
	for _, tt := range tests {
		t.Run(tt.date, func(t *testing.T) {
			is := is.New(t)
			d, err := ParseDate(tt.date)
			is.NoErr(err) // parse date
			got, err := DueFactor(d)
			is.NoErr(err) // factor
			is.Equal(got, tt.want)

			back, err := DueDateFromFactor(got, d.AddDays(-30))
			is.NoErr(err)     // inverse
			is.Equal(back, d) // inverse near the date returns it
		})
	}
	for _, out := range []string{"2000-07-02", "1997-10-07", "2049-10-14"} {
		is := is.New(t)
		d, _ := ParseDate(out)
		_, err := DueFactor(d)
		is.True(errors.Is(err, ErrDueDate)) // outside the factor cycles
	}
	is := is.New(t)
	for _, f := range []int{0, 999, 10000} {
		_, err := DueDateFromFactor(f, Date{2026, 1, 1})
		is.True(errors.Is(err, ErrFactor)) // not a four-digit factor
	}
	d, err := DueDateFromFactor(7552, Date{2026, 1, 1})
	is.NoErr(err)
	is.Equal(d, Date{2018, time.June, 11}) // cycle 1 is nearer to 2026
	d, err = DueDateFromFactor(7552, Date{2040, 1, 1})
	is.NoErr(err)
	is.Equal(d, Date{2043, time.January, 31}) // cycle 2 is nearer to 2040
}

func TestBarcodeErrors(t *testing.T) {
	due := Date{2026, time.March, 10}
	ff := strings.Repeat("1", 25)
	tests := []struct {
		name   string
		bank   string
		due    Date
		amount int64
		ff     string
		want   error
	}{
		{"bank too short", "99", due, 100, ff, ErrFormat},
		{"bank not digits", "9a9", due, 100, ff, ErrFormat},
		{"free field short", "999", due, 100, ff[:24], ErrFormat},
		{"free field letters", "999", due, 100, "a" + ff[1:], ErrFormat},
		{"negative amount", "999", due, -1, ff, ErrAmount},
		{"amount over 10 digits", "999", due, MaxAmount + 1, ff, ErrAmount},
		{"due before 2000-07-03", "999", Date{2000, 1, 1}, 100, ff, ErrDueDate},
		{"due after 2049-10-13", "999", Date{2050, 1, 1}, 100, ff, ErrDueDate},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			is := is.New(t)
			_, err := Barcode(tt.bank, tt.due, tt.amount, tt.ff)
			is.True(errors.Is(err, tt.want)) // rejected for the right reason
		})
	}
	is := is.New(t)
	bc, err := Barcode("999", due, MaxAmount, ff)
	is.NoErr(err) // largest amount fits
	f, err := ParseBarcode(bc)
	is.NoErr(err)
	is.Equal(f.Amount, MaxAmount)
}

func TestNew(t *testing.T) {
	is := is.New(t)
	due := Date{2026, time.March, 10}
	b, err := New("pi_3MtwBwLkdIwHu7ix28a3tqPa", due, 15990)
	is.NoErr(err) // issue boleto
	is.Equal(len(b.Barcode), 44)
	is.Equal(len(b.DigitableLine), 47)
	is.Equal(b.DueDate, "2026-03-10")
	is.Equal(b.Amount, int64(15990))
	is.NoErr(ValidateBarcode(b.Barcode))    // barcode check digit
	is.NoErr(ValidateLine(b.DigitableLine)) // line check digits

	f, err := ParseBarcode(b.Barcode)
	is.NoErr(err)
	is.Equal(f.Bank, BankCode)
	is.Equal(f.Amount, int64(15990)) // amount in the value field
	wantFactor, _ := DueFactor(due)
	is.Equal(f.Factor, wantFactor) // factor matches due date
	is.Equal(f.FreeField, FreeField("pi_3MtwBwLkdIwHu7ix28a3tqPa"))

	again, err := New("pi_3MtwBwLkdIwHu7ix28a3tqPa", due, 15990)
	is.NoErr(err)
	is.Equal(again, b) // deterministic

	other, err := New("pi_other", due, 15990)
	is.NoErr(err)
	is.True(other.Barcode != b.Barcode) // distinct ids, distinct barcodes

	_, err = New("pi_x", due, 0)
	is.True(errors.Is(err, ErrAmount)) // a boleto charges something
}

func TestFreeField(t *testing.T) {
	for _, id := range []string{"", "pi_1", "pi_3MtwBwLkdIwHu7ix28a3tqPa", strings.Repeat("z", 500)} {
		is := is.New(t)
		ff := FreeField(id)
		is.Equal(len(ff), 25)       // 25 digits
		is.True(isDigits(ff))       // digits only
		is.Equal(FreeField(id), ff) // deterministic
	}
}

func TestParseDate(t *testing.T) {
	tests := []struct {
		in      string
		want    Date
		wantErr bool
	}{
		{"2026-03-10", Date{2026, time.March, 10}, false},
		{"2024-02-29", Date{2024, time.February, 29}, false},
		{"2026-02-30", Date{}, true},
		{"2025-02-29", Date{}, true},
		{"2026-13-01", Date{}, true},
		{"2026-3-10", Date{}, true},
		{"2026/03/10", Date{}, true},
		{"10-03-2026", Date{}, true},
		{"2026-03-10T00:00:00Z", Date{}, true},
		{" 2026-03-10", Date{}, true},
		{"+026-03-10", Date{}, true},
		{"", Date{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			is := is.New(t)
			got, err := ParseDate(tt.in)
			if tt.wantErr {
				is.True(errors.Is(err, ErrInvalidDate)) // rejected
				return
			}
			is.NoErr(err)
			is.Equal(got, tt.want)
			is.Equal(got.String(), tt.in) // round trip
		})
	}
}

func TestDefaultDueDate(t *testing.T) {
	tests := []struct {
		name        string
		confirmedAt time.Time
		want        string
	}{
		{"midday", time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC), "2026-03-13"},
		{"late UTC", time.Date(2026, 3, 10, 23, 59, 59, 0, time.UTC), "2026-03-13"},
		{"evening in São Paulo is next UTC day", time.Date(2026, 3, 10, 22, 0, 0, 0, time.FixedZone("BRT", -3*3600)), "2026-03-14"},
		{"month end", time.Date(2026, 2, 27, 8, 0, 0, 0, time.UTC), "2026-03-02"},
		{"year end", time.Date(2025, 12, 30, 8, 0, 0, 0, time.UTC), "2026-01-02"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			is := is.New(t)
			is.Equal(DefaultDueDate(tt.confirmedAt).String(), tt.want)
		})
	}
}

func TestDateText(t *testing.T) {
	is := is.New(t)
	var d Date
	is.NoErr(d.UnmarshalText([]byte("2026-03-10")))
	b, err := d.MarshalText()
	is.NoErr(err)
	is.Equal(string(b), "2026-03-10")
	is.True(d.UnmarshalText([]byte("2026-02-30")) != nil) // non-existent date
	is.True(Date{}.IsZero())
	is.True(Date{2026, 1, 1}.Before(Date{2026, 1, 2}))
	is.True(Date{2026, 1, 2}.After(Date{2026, 1, 1}))
	is.Equal(Date{2026, 3, 1}.DaysSince(Date{2026, 2, 1}), 28)
}

// decodeI2of5 reads element widths back into digits, checking start and stop patterns.
func decodeI2of5(t *testing.T, widths []int) string {
	t.Helper()
	is := is.New(t)
	is.True(len(widths) >= 7)                                     // start and stop present
	is.Equal(widths[:4], []int{Narrow, Narrow, Narrow, Narrow})   // start pattern
	is.Equal(widths[len(widths)-3:], []int{Wide, Narrow, Narrow}) // stop pattern
	body := widths[4 : len(widths)-3]
	is.Equal(len(body)%10, 0) // whole pairs
	digitOf := map[string]byte{}
	for d, p := range []string{"NNWWN", "WNNNW", "NWNNW", "WWNNN", "NNWNW", "WNWNN", "NWWNN", "NNNWW", "WNNWN", "NWNWN"} {
		digitOf[p] = byte('0' + d)
	}
	var out []byte
	for i := 0; i < len(body); i += 10 {
		var bars, spaces []byte
		for k := range 5 {
			for j, w := range []int{body[i+2*k], body[i+2*k+1]} {
				c := byte('N')
				if w == Wide {
					c = 'W'
				}
				if j == 0 {
					bars = append(bars, c)
				} else {
					spaces = append(spaces, c)
				}
			}
		}
		a, ok1 := digitOf[string(bars)]
		b, ok2 := digitOf[string(spaces)]
		is.True(ok1 && ok2) // valid two-of-five patterns
		out = append(out, a, b)
	}
	return string(out)
}

func TestI2of5(t *testing.T) {
	tests := []struct {
		name   string
		digits string
	}{
		{"pair 38", "38"},
		{"pair 05", "05"},
		{"all digits", "0123456789"},
		{"worked example barcode", exampleBarcode},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			is := is.New(t)
			w, err := I2of5Bars(tt.digits)
			is.NoErr(err)                          // encode
			is.Equal(decodeI2of5(t, w), tt.digits) // decodes back
		})
	}

	is := is.New(t)
	w, err := I2of5Bars("38")
	is.NoErr(err)
	// 3 = WWNNN in bars, 8 = WNNWN in spaces, interleaved.
	is.Equal(w, []int{1, 1, 1, 1, 3, 3, 3, 1, 1, 1, 1, 3, 1, 1, 3, 1, 1})

	w, err = I2of5Bars(exampleBarcode)
	is.NoErr(err)
	total := 0
	for _, x := range w {
		total += x
	}
	is.Equal(total, 405) // 4 + 22×18 + 5 narrow units: 103 mm at 0.254 mm

	for _, bad := range []string{"", "1", "123", "12a4"} {
		_, err := I2of5Bars(bad)
		is.True(errors.Is(err, ErrFormat)) // odd length or non-digits
	}
}

func TestSVG(t *testing.T) {
	is := is.New(t)
	svg, err := SVG(exampleBarcode, DefaultBarHeight)
	is.NoErr(err)                                                         // render
	is.NoErr(xml.Unmarshal([]byte(svg), new(struct{ XMLName xml.Name }))) // well-formed XML
	is.True(strings.HasPrefix(svg, `<svg xmlns="http://www.w3.org/2000/svg" width="107.95mm" height="12.954mm" viewBox="0 0 425 51"`))

	w, _ := I2of5Bars(exampleBarcode)
	bars := (len(w) + 1) / 2
	is.Equal(strings.Count(svg, `fill="#000"`), bars) // one rect per bar

	_, err = SVG("123", DefaultBarHeight)
	is.True(errors.Is(err, ErrFormat)) // odd length
	_, err = SVG(exampleBarcode, 0)
	is.True(errors.Is(err, ErrFormat)) // no height
}

func TestPrintedNumbers(t *testing.T) {
	for code, want := range map[string]string{"001": "001-9", "237": "237-2", "341": "341-7", "104": "104-0", "999": "999-7"} {
		if got := BankCodeWithDV(code); got != want {
			t.Errorf("BankCodeWithDV(%s) = %s, want %s", code, got, want)
		}
	}
	b, err := New("pi_test", Date{Year: 2026, Month: 12, Day: 1}, 10000)
	if err != nil {
		t.Fatal(err)
	}
	nn := NossoNumero(b.Barcode)
	if len(nn) != 13 || nn[:11] != b.Barcode[19:30] || nn[11] != '-' {
		t.Errorf("NossoNumero = %q", nn)
	}
	if NossoNumero("123") != "" {
		t.Error("a short barcode has no nosso número")
	}
}
