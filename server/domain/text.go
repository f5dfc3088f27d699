package domain

// ForbiddenTextRune returns the first character no text field may hold (NUL, or a
// bidirectional control character that can make a name read differently from what it is:
// U+202A–U+202E, U+2066–U+2069), and whether there is one. Every interface applies it: the JSON
// decoder of /v1 and /api/v1, the hosted checkout's and the activation's forms.
func ForbiddenTextRune(s string) (rune, bool) {
	for _, r := range s {
		if r == 0 || r >= 0x202A && r <= 0x202E || r >= 0x2066 && r <= 0x2069 {
			return r, true
		}
	}
	return 0, false
}

// ForbiddenTextError is the 400 naming param for text s that holds a character of
// ForbiddenTextRune (name is how the message calls it), or nil.
func ForbiddenTextError(param, name, s string) *Error {
	switch r, bad := ForbiddenTextRune(s); {
	case !bad:
		return nil
	case r == 0:
		return Invalid(param, "%s must not contain the NUL character.", name)
	default:
		return Invalid(param, "%s must not contain bidirectional control characters (U+%04X).", name, r)
	}
}
