package pix

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Parse errors; every error Parse and Verify return wraps one of them.
var (
	ErrInvalidCode = errors.New("pix: invalid BR Code")
	ErrCRCMismatch = errors.New("pix: BR Code CRC mismatch")
)

// Code is a parsed and validated BR Code.
type Code struct {
	Fields       map[string]string // every top-level ID with its raw value
	SingleUse    bool              // field 01 is 12
	Key          string            // template 26-01 (static code)
	URL          string            // template 26-25 without https:// (dynamic code)
	Description  string            // template 26-02
	Amount       int64             // field 54 in centavos; 0 when absent
	MerchantName string            // field 59
	MerchantCity string            // field 60
	TxID         string            // field 62-05, *** when none
	CRC          string            // field 63, four upper-case hex digits
}

// Verify reports whether code is a well-formed BR Code with a correct CRC and the fields the
// BCB manual makes mandatory.
func Verify(code string) error {
	_, err := Parse(code)
	return err
}

// Parse decodes a BR Code, checking its TLV structure, its CRC and its mandatory fields.
func Parse(code string) (Code, error) {
	if !isPrintableASCII(code) {
		return Code{}, fmt.Errorf("%w: not printable ASCII", ErrInvalidCode)
	}
	ids, fields, err := splitTLV(code)
	if err != nil {
		return Code{}, err
	}
	if len(ids) == 0 || ids[0] != "00" || fields["00"] != "01" {
		return Code{}, fmt.Errorf("%w: must start with payload format 000201", ErrInvalidCode)
	}
	if ids[len(ids)-1] != "63" || len(fields["63"]) != 4 {
		return Code{}, fmt.Errorf("%w: must end with a 4-character CRC field 63", ErrInvalidCode)
	}
	crc := fields["63"]
	if strings.ToUpper(crc) != crc {
		return Code{}, fmt.Errorf("%w: CRC %q is not upper-case hex", ErrInvalidCode, crc)
	}
	if want := fmt.Sprintf("%04X", CRC16([]byte(code[:len(code)-4]))); crc != want {
		return Code{}, fmt.Errorf("%w: field 63 is %s, computed %s", ErrCRCMismatch, crc, want)
	}

	c := Code{Fields: fields, CRC: crc}
	switch fields["01"] {
	case "12":
		c.SingleUse = true
	case "", "11":
	default:
		return Code{}, fmt.Errorf("%w: field 01 must be 11 or 12", ErrInvalidCode)
	}

	account, ok := fields["26"]
	if !ok {
		return Code{}, fmt.Errorf("%w: merchant account template 26 is missing", ErrInvalidCode)
	}
	_, sub, err := splitTLV(account)
	if err != nil {
		return Code{}, fmt.Errorf("%w (in template 26)", err)
	}
	if !strings.EqualFold(sub["00"], GUI) {
		return Code{}, fmt.Errorf("%w: template 26 GUI must be %s", ErrInvalidCode, GUI)
	}
	c.Key, c.URL, c.Description = sub["01"], sub["25"], sub["02"]
	if (c.Key == "") == (c.URL == "") {
		return Code{}, fmt.Errorf("%w: template 26 needs exactly one of key (01) and URL (25)", ErrInvalidCode)
	}

	if mcc := fields["52"]; len(mcc) != 4 || !isDigits(mcc) {
		return Code{}, fmt.Errorf("%w: field 52 must be a 4-digit MCC", ErrInvalidCode)
	}
	if fields["53"] != "986" {
		return Code{}, fmt.Errorf("%w: field 53 must be 986", ErrInvalidCode)
	}
	if a, ok := fields["54"]; ok {
		if c.Amount, err = parseAmount(a); err != nil {
			return Code{}, err
		}
	}
	if fields["58"] != "BR" {
		return Code{}, fmt.Errorf("%w: field 58 must be BR", ErrInvalidCode)
	}
	c.MerchantName, c.MerchantCity = fields["59"], fields["60"]
	if n := len(c.MerchantName); n < 1 || n > MaxMerchantName {
		return Code{}, fmt.Errorf("%w: field 59 must have 1 to %d characters", ErrInvalidCode, MaxMerchantName)
	}
	if n := len(c.MerchantCity); n < 1 || n > MaxMerchantCity {
		return Code{}, fmt.Errorf("%w: field 60 must have 1 to %d characters", ErrInvalidCode, MaxMerchantCity)
	}

	extra, ok := fields["62"]
	if !ok {
		return Code{}, fmt.Errorf("%w: additional data template 62 is missing", ErrInvalidCode)
	}
	_, sub, err = splitTLV(extra)
	if err != nil {
		return Code{}, fmt.Errorf("%w (in template 62)", err)
	}
	c.TxID = sub["05"]
	if c.TxID != "***" && (len(c.TxID) > MaxTxID || !isAlphanumeric(c.TxID)) {
		return Code{}, fmt.Errorf("%w: txid (62-05) must be *** or 1 to %d [A-Za-z0-9]", ErrInvalidCode, MaxTxID)
	}
	return c, nil
}

// splitTLV cuts s into ID + length + value triples, returning the IDs in order and the values.
func splitTLV(s string) ([]string, map[string]string, error) {
	var ids []string
	fields := map[string]string{}
	for i := 0; i < len(s); {
		if len(s)-i < 4 || !isDigits(s[i:i+4]) {
			return nil, nil, fmt.Errorf("%w: truncated or non-numeric ID/length at offset %d", ErrInvalidCode, i)
		}
		id := s[i : i+2]
		n, _ := strconv.Atoi(s[i+2 : i+4])
		i += 4
		if n == 0 || i+n > len(s) {
			return nil, nil, fmt.Errorf("%w: field %s length %d does not fit", ErrInvalidCode, id, n)
		}
		if _, dup := fields[id]; dup {
			return nil, nil, fmt.Errorf("%w: field %s appears twice", ErrInvalidCode, id)
		}
		ids = append(ids, id)
		fields[id] = s[i : i+n]
		i += n
	}
	return ids, fields, nil
}

// parseAmount reads field 54 ("123.99", "5", "0.5") as centavos.
func parseAmount(a string) (int64, error) {
	whole, frac, _ := strings.Cut(a, ".")
	if len(a) > maxAmountLen || whole == "" || !isDigits(whole) || len(frac) > 2 || (strings.Contains(a, ".") && (frac == "" || !isDigits(frac))) {
		return 0, fmt.Errorf("%w: field 54 %q is not a dot-decimal amount", ErrInvalidCode, a)
	}
	for len(frac) < 2 {
		frac += "0"
	}
	w, err := strconv.ParseInt(whole, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%w: field 54 %q is out of range", ErrInvalidCode, a)
	}
	f, _ := strconv.ParseInt(frac, 10, 64)
	return w*100 + f, nil
}

// isDigits reports whether s is non-empty and only ASCII digits.
func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
