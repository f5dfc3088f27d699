package boleto

import (
	"crypto/sha256"
	"fmt"
	"math/big"
	"strings"
)

// BankCode is troco's simulated issuer: a well-formed 3-digit COMPE code that no real bank
// holds, so sandbox boletos pass every check digit yet can never be paid at a real bank. A live
// connector to a partner bank replaces it with that bank's code and free-field layout.
const BankCode = "999"

// Boleto is what the API returns for a boleto payment: the barcode, the digits-only line, the
// civil due date and the amount the barcode carries.
type Boleto struct {
	Barcode       string // 44 digits
	DigitableLine string // 47 digits, unformatted; FormatLine adds the dots and spaces
	DueDate       string // YYYY-MM-DD
	Amount        int64  // centavos
}

// New issues troco's boleto for a payment (id is typically the payment intent id), due on a
// civil date, for amount centavos; the same inputs always give the same boleto.
func New(id string, due Date, amount int64) (Boleto, error) {
	if amount < 1 {
		return Boleto{}, fmt.Errorf("%w: must be positive", ErrAmount)
	}
	barcode, err := Barcode(BankCode, due, amount, FreeField(id))
	if err != nil {
		return Boleto{}, err
	}
	line, err := DigitableLine(barcode)
	if err != nil {
		return Boleto{}, err
	}
	return Boleto{Barcode: barcode, DigitableLine: line, DueDate: due.String(), Amount: amount}, nil
}

// FreeField derives the 25-digit free field from an identifier (SHA-256 reduced modulo
// 10^25), so a payment's boleto is reproducible and distinct payments get distinct barcodes.
func FreeField(id string) string {
	sum := sha256.Sum256([]byte(id))
	n := new(big.Int).SetBytes(sum[:])
	n.Mod(n, new(big.Int).Exp(big.NewInt(10), big.NewInt(25), nil))
	s := n.String()
	return strings.Repeat("0", 25-len(s)) + s
}
