package server_test

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/matryer/is"
)

// testPNG draws a real, decodable PNG (a two-colour square) for the browser to render.
func testPNG(t *testing.T) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 96, 96))
	for y := 0; y < 96; y++ {
		for x := 0; x < 96; x++ {
			c := color.RGBA{R: 0x1f, G: 0x6f, B: 0xeb, A: 0xff}
			if (x/24+y/24)%2 == 0 {
				c = color.RGBA{R: 0xff, G: 0xc8, B: 0x3d, A: 0xff}
			}
			img.Set(x, y, c)
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestBrowserCheckoutProductImage: a product whose image_url names an uploaded product_image
// file shows that image on the hosted checkout (the browser loads and decodes it).
func TestBrowserCheckoutProductImage(t *testing.T) {
	is := is.New(t)
	br := newChrome(t)
	e := newEnv(t)
	pic := testPNG(t)
	f := e.uploadFile(e.Test, "product_image", "camiseta.png", "image/png", pic)
	is.Equal(f.Status, 200)
	prod := e.Do("POST", "/v1/products", e.Test, map[string]any{"name": "Camiseta estampada", "image_url": f.Str("id"),
		"default_price_data": map[string]any{"unit_amount": 7990, "currency": "brl"}})
	is.Equal(prod.Status, 200)
	s := e.coSession(e.Test, map[string]any{"line_items": []any{map[string]any{"price": prod.Str("default_price"), "quantity": 1}}})

	br.do("open checkout", chromedp.Navigate(s.Str("url")), chromedp.WaitVisible(tid("pay-button"), chromedp.ByQuery))
	var src string
	var width int
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		br.do("read image", chromedp.Evaluate(`(() => { const i = document.querySelector('img.item-img'); return i && i.complete ? i.naturalWidth : 0 })()`, &width),
			chromedp.Evaluate(`(() => { const i = document.querySelector('img.item-img'); return i ? i.src : '' })()`, &src))
		if width > 0 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	is.Equal(src, e.URL()+"/files/"+f.Str("id")+"/contents") // the file's public URL
	is.Equal(width, 96)                                      // loaded and decoded by the browser
	br.shoot("product-image")
}
