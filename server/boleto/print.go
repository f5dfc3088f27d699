package boleto

import "strconv"

// BankCodeWithDV is a bank's COMPE code with its check digit as printed in a boleto's header
// ("999-7"): modulo 11 with weights 2 to 9 from the right; 10 and 11 become 0.
func BankCodeWithDV(code string) string {
	return code + "-" + mod11DV(code)
}

// NossoNumero is the issuer's number of the boleto, printed on both parts of the document: the
// first 11 digits of the barcode's free field and their modulo-11 check digit ("12345678901-2").
// The barcode must be the 44 digits of a troco boleto.
func NossoNumero(barcode string) string {
	if len(barcode) != 44 {
		return ""
	}
	n := barcode[19:30]
	return n + "-" + mod11DV(n)
}

func mod11DV(digits string) string {
	sum, w := 0, 2
	for i := len(digits) - 1; i >= 0; i-- {
		sum += int(digits[i]-'0') * w
		w++
		if w > 9 {
			w = 2
		}
	}
	dv := 11 - sum%11
	if dv >= 10 {
		dv = 0
	}
	return strconv.Itoa(dv)
}
