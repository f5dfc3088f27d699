package static

import _ "embed"

// ActivationCSS is the stylesheet of the hosted activation form (no script: the form works
// without JavaScript).
//
//go:embed activation.css
var ActivationCSS []byte
