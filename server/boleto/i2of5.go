package boleto

import (
	"fmt"
	"strings"
)

// Element widths of Interleaved 2 of 5 in narrow units, in the 1:3 ratio FEBRABAN specifies.
const (
	Narrow = 1
	Wide   = 3
)

// Physical proportions of the FEBRABAN barcode: a 0.254 mm narrow element makes the 44-digit
// code 103 mm long, and DefaultBarHeight narrow units make it 13 mm tall.
const (
	narrowMicrometres = 254
	DefaultBarHeight  = 51
	quietZone         = 10 // narrow units of white on each side
)

// i2of5Digits gives each digit's five elements, W for wide and N for narrow.
var i2of5Digits = [10]string{
	"NNWWN", "WNNNW", "NWNNW", "WWNNN", "NNWNW",
	"WNWNN", "NWWNN", "NNNWW", "WNNWN", "NWNWN",
}

// I2of5Bars encodes an even number of digits as Interleaved 2 of 5 element widths (Narrow or
// Wide), alternating bar and space and starting with a bar, start pattern (narrow bar, space,
// bar, space) and stop pattern (wide bar, narrow space, narrow bar) included. In each pair
// the first digit is drawn by the bars and the second by the spaces between them.
func I2of5Bars(digits string) ([]int, error) {
	if digits == "" || len(digits)%2 != 0 || !isDigits(digits) {
		return nil, fmt.Errorf("%w: interleaved 2 of 5 needs an even number of digits", ErrFormat)
	}
	widths := []int{Narrow, Narrow, Narrow, Narrow}
	width := func(c byte) int {
		if c == 'W' {
			return Wide
		}
		return Narrow
	}
	for i := 0; i < len(digits); i += 2 {
		bars, spaces := i2of5Digits[digits[i]-'0'], i2of5Digits[digits[i+1]-'0']
		for k := range 5 {
			widths = append(widths, width(bars[k]), width(spaces[k]))
		}
	}
	return append(widths, Wide, Narrow, Narrow), nil
}

// SVG draws digits as an Interleaved 2 of 5 barcode for the printable boleto page, height in
// narrow units (DefaultBarHeight for FEBRABAN's 13 mm), sized in millimetres so it prints at
// the standard scale, with a quiet zone on each side.
func SVG(digits string, height int) (string, error) {
	if height < 1 {
		return "", fmt.Errorf("%w: barcode height must be positive", ErrFormat)
	}
	widths, err := I2of5Bars(digits)
	if err != nil {
		return "", err
	}
	total := 2 * quietZone
	for _, w := range widths {
		total += w
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%smm" height="%smm" viewBox="0 0 %d %d" shape-rendering="crispEdges" role="img" aria-label="%s">`,
		millimetres(total), millimetres(height), total, height, digits)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="#fff"/>`, total, height)
	x := quietZone
	for i, w := range widths {
		if i%2 == 0 {
			fmt.Fprintf(&b, `<rect x="%d" width="%d" height="%d" fill="#000"/>`, x, w, height)
		}
		x += w
	}
	b.WriteString(`</svg>`)
	return b.String(), nil
}

// millimetres writes units narrow elements as a decimal length in millimetres.
func millimetres(units int) string {
	um := units * narrowMicrometres
	return strings.TrimRight(strings.TrimRight(fmt.Sprintf("%d.%03d", um/1000, um%1000), "0"), ".")
}
