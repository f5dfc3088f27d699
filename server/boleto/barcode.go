package boleto

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// CurrencyReal is the currency digit (barcode position 4) for Brazilian reais.
const CurrencyReal = '9'

// MaxAmount is the largest value, in centavos, that fits the barcode's 10-digit value field.
const MaxAmount int64 = 9_999_999_999

// ErrAmount is wrapped when an amount is negative, zero where a charge needs one, or too
// large for the barcode.
var ErrAmount = errors.New("boleto: invalid amount")

// ErrFormat is wrapped when a barcode or line has the wrong length, non-digits, or a currency
// other than reais; a wrong check digit is reported as a *CheckDigitError instead.
var ErrFormat = errors.New("boleto: malformed")

// Check names one of the four check digits of a boleto.
type Check string

// The check digits: the three mod-10 field DVs of the line and the mod-11 general DV.
const (
	CheckField1  Check = "field 1"
	CheckField2  Check = "field 2"
	CheckField3  Check = "field 3"
	CheckGeneral Check = "general"
)

// CheckDigitError reports which check digit of a barcode or line is wrong.
type CheckDigitError struct {
	Check Check
	Got   int
	Want  int
}

// Error says which check failed and what was expected.
func (e *CheckDigitError) Error() string {
	return fmt.Sprintf("boleto: %s check digit is %d, want %d", e.Check, e.Got, e.Want)
}

// Fields are the parts of a barcode.
type Fields struct {
	Bank      string // positions 1–3
	Factor    int    // due-date factor, positions 6–9
	Amount    int64  // centavos, positions 10–19
	FreeField string // positions 20–44, the issuing bank's own use
}

// Barcode returns the 44-digit barcode for bank (3 digits), the due date, the amount in
// centavos and the bank's 25-digit free field, with its general check digit.
func Barcode(bank string, due Date, amount int64, freeField string) (string, error) {
	if len(bank) != 3 || !isDigits(bank) {
		return "", fmt.Errorf("%w: bank code %q is not 3 digits", ErrFormat, bank)
	}
	if len(freeField) != 25 || !isDigits(freeField) {
		return "", fmt.Errorf("%w: free field is not 25 digits", ErrFormat)
	}
	if amount < 0 || amount > MaxAmount {
		return "", fmt.Errorf("%w: %d does not fit 10 digits", ErrAmount, amount)
	}
	factor, err := DueFactor(due)
	if err != nil {
		return "", err
	}
	body := fmt.Sprintf("%s%c%04d%010d%s", bank, CurrencyReal, factor, amount, freeField)
	return body[:4] + strconv.Itoa(generalDV(body)) + body[4:], nil
}

// ParseBarcode validates a barcode and splits it into its fields.
func ParseBarcode(barcode string) (Fields, error) {
	if err := ValidateBarcode(barcode); err != nil {
		return Fields{}, err
	}
	factor, _ := strconv.Atoi(barcode[5:9])
	amount, _ := strconv.ParseInt(barcode[9:19], 10, 64)
	return Fields{Bank: barcode[:3], Factor: factor, Amount: amount, FreeField: barcode[19:]}, nil
}

// ValidateBarcode checks that barcode is 44 digits in reais with a correct general check
// digit; a wrong digit comes back as a *CheckDigitError.
func ValidateBarcode(barcode string) error {
	if len(barcode) != 44 || !isDigits(barcode) {
		return fmt.Errorf("%w: barcode must be 44 digits", ErrFormat)
	}
	if barcode[3] != CurrencyReal {
		return fmt.Errorf("%w: currency code %c is not 9 (real)", ErrFormat, barcode[3])
	}
	if got, want := int(barcode[4]-'0'), generalDV(barcode[:4]+barcode[5:]); got != want {
		return &CheckDigitError{Check: CheckGeneral, Got: got, Want: want}
	}
	return nil
}

// DigitableLine returns the 47-digit linha digitável (digits only) of a valid barcode.
func DigitableLine(barcode string) (string, error) {
	if err := ValidateBarcode(barcode); err != nil {
		return "", err
	}
	f1 := barcode[0:4] + barcode[19:24]
	f2 := barcode[24:34]
	f3 := barcode[34:44]
	return f1 + strconv.Itoa(mod10(f1)) +
		f2 + strconv.Itoa(mod10(f2)) +
		f3 + strconv.Itoa(mod10(f3)) +
		barcode[4:5] + barcode[5:19], nil
}

// ValidateLine checks a linha digitável, with or without dots and spaces: 47 digits, the three
// field check digits and the general one, reporting the first wrong one as a *CheckDigitError.
func ValidateLine(line string) error {
	_, err := BarcodeFromLine(line)
	return err
}

// BarcodeFromLine validates a linha digitável (with or without dots and spaces) and returns
// the barcode it stands for.
func BarcodeFromLine(line string) (string, error) {
	l, err := lineDigits(line)
	if err != nil {
		return "", err
	}
	fields := []struct {
		check Check
		data  string
		dv    byte
	}{
		{CheckField1, l[0:9], l[9]},
		{CheckField2, l[10:20], l[20]},
		{CheckField3, l[21:31], l[31]},
	}
	for _, f := range fields {
		if got, want := int(f.dv-'0'), mod10(f.data); got != want {
			return "", &CheckDigitError{Check: f.check, Got: got, Want: want}
		}
	}
	barcode := l[0:4] + l[32:33] + l[33:47] + l[4:9] + l[10:20] + l[21:31]
	if err := ValidateBarcode(barcode); err != nil {
		return "", err
	}
	return barcode, nil
}

// FormatLine writes a 47-digit line the way it is printed on the boleto:
// 23793.38128 60007.827136 95000.063305 9 75520000370000.
func FormatLine(line string) (string, error) {
	l, err := lineDigits(line)
	if err != nil {
		return "", err
	}
	return l[0:5] + "." + l[5:10] + " " +
		l[10:15] + "." + l[15:21] + " " +
		l[21:26] + "." + l[26:32] + " " +
		l[32:33] + " " + l[33:47], nil
}

// lineDigits removes the dots and spaces of a printed line and checks that 47 digits remain.
func lineDigits(line string) (string, error) {
	l := strings.Map(func(r rune) rune {
		if r == '.' || r == ' ' {
			return -1
		}
		return r
	}, line)
	if len(l) != 47 || !isDigits(l) {
		return "", fmt.Errorf("%w: digitable line must be 47 digits", ErrFormat)
	}
	return l, nil
}

// mod10 is the field check digit of the line: weights 2,1,2,1… from the right, products above
// 9 reduced to the sum of their digits, DV = next multiple of 10 − sum (10 → 0).
func mod10(digits string) int {
	sum, weight := 0, 2
	for i := len(digits) - 1; i >= 0; i-- {
		p := int(digits[i]-'0') * weight
		sum += p/10 + p%10
		weight = 3 - weight
	}
	return (10 - sum%10) % 10
}

// generalDV is the mod-11 check digit over the 43 barcode digits without position 5: weights
// 2..9 cycling from the right, DV = 11 − (sum mod 11), with 0, 10 and 11 becoming 1.
func generalDV(digits43 string) int {
	sum, weight := 0, 2
	for i := len(digits43) - 1; i >= 0; i-- {
		sum += int(digits43[i]-'0') * weight
		weight++
		if weight > 9 {
			weight = 2
		}
	}
	dv := 11 - sum%11
	if dv == 0 || dv == 10 || dv == 11 {
		return 1
	}
	return dv
}
