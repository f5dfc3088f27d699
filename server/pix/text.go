package pix

import (
	"strings"
	"unicode"
)

// accented maps the Latin letters a Brazilian name or city may carry to their plain ASCII
// form; anything else outside printable ASCII is dropped.
var accented = func() map[rune]rune {
	from := []rune("ÀÁÂÃÄÅàáâãäåÇçÈÉÊËèéêëÌÍÎÏìíîïÑñÒÓÔÕÖØòóôõöøÙÚÛÜùúûüÝýÿºª")
	to := []rune("AAAAAAaaaaaaCcEEEEeeeeIIIIiiiiNnOOOOOOooooooUUUUuuuuYyyoa")
	m := make(map[rune]rune, len(from))
	for i, r := range from {
		m[r] = to[i]
	}
	return m
}()

// asciiText strips accents, drops what is not printable ASCII, collapses white space and
// truncates to max bytes, which is what the BR Code fields 59 and 60 require.
func asciiText(s string, max int) string {
	var b strings.Builder
	for _, r := range s {
		if a, ok := accented[r]; ok {
			r = a
		}
		switch {
		case unicode.IsSpace(r):
			b.WriteByte(' ')
		case r >= 0x20 && r <= 0x7E:
			b.WriteRune(r)
		}
	}
	out := strings.Join(strings.Fields(b.String()), " ")
	if len(out) > max {
		out = strings.TrimRight(out[:max], " ")
	}
	return out
}

// isPrintableASCII reports whether s has only bytes 0x20..0x7E.
func isPrintableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7E {
			return false
		}
	}
	return true
}

// isAlphanumeric reports whether s is non-empty and only [A-Za-z0-9].
func isAlphanumeric(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z') {
			return false
		}
	}
	return true
}
