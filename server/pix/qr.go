package pix

import (
	"errors"
	"fmt"

	qrcode "github.com/skip2/go-qrcode"
)

// MaxQRSize bounds QRPNG's size so a request parameter cannot ask for a huge image.
const MaxQRSize = 2048

// QRPNG renders code as a square PNG QR image of size×size pixels with medium (M) error
// correction, the level PIX apps expect.
func QRPNG(code string, size int) ([]byte, error) {
	if code == "" {
		return nil, errors.New("pix: QR content is empty")
	}
	if size < 1 || size > MaxQRSize {
		return nil, fmt.Errorf("pix: QR size must be 1 to %d pixels", MaxQRSize)
	}
	png, err := qrcode.Encode(code, qrcode.Medium, size)
	if err != nil {
		return nil, fmt.Errorf("pix: encode QR: %w", err)
	}
	return png, nil
}
