// Package static holds the embedded CSS, scripts and images of troco's hosted pages.
package static

import _ "embed"

// CheckoutCSS is the stylesheet of the hosted checkout.
//
//go:embed checkout.css
var CheckoutCSS []byte

// CheckoutJS is the hosted checkout's progressive enhancement: card brand detection and
// formatting, the PIX countdown, copy buttons, status polling and double-submit protection.
// Every page works without it.
//
//go:embed checkout.js
var CheckoutJS []byte

// DashboardCSS is the stylesheet of the dashboard.
//
//go:embed dashboard.css
var DashboardCSS []byte

// FaviconSVG is troco's icon, served at /favicon.svg (and /favicon.ico) for every hosted page.
//
//go:embed favicon.svg
var FaviconSVG []byte

// BoletoCSS is the stylesheet of the printable boleto.
//
//go:embed boleto.css
var BoletoCSS []byte
