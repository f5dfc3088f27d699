package server_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"troco/db/dbtest"

	"github.com/matryer/is"

	"troco/db"
	"troco/server"
	"troco/server/core"
	"troco/server/domain"
)

// filesDir is the directory the test server keeps file bytes in.
func (e *testEnv) filesDir() string { return filepath.Join(e.Dir, "files") }

// storedFiles lists the names in the files directory (bytes and temporary uploads).
func (e *testEnv) storedFiles() []string {
	e.t.Helper()
	entries, err := os.ReadDir(e.filesDir())
	if err != nil {
		e.t.Fatal(err)
	}
	var names []string
	for _, en := range entries {
		names = append(names, en.Name())
	}
	return names
}

func (e *testEnv) fileRows() int {
	e.t.Helper()
	var n int
	err := e.DB.Read(context.Background(), func(tx *db.Tx) error {
		ids, err := tx.FileIDs()
		n = len(ids)
		return err
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return n
}

func TestFileUploadPublic(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	r := e.uploadParts(e.Test, []uploadPart{
		{name: "purpose", content: []byte("product_image")},
		{name: "file", filename: "camiseta azul.png", contentType: "image/png", content: pngBytes},
		{name: "metadata[sku]", content: []byte("CAM-01")},
	})
	is.Equal(r.Status, 200) // uploaded
	id := r.Str("id")
	is.True(strings.HasPrefix(id, "file_"))
	is.Equal(r.Str("object"), "file")
	is.Equal(r.Str("purpose"), "product_image")
	is.Equal(r.Str("filename"), "camiseta azul.png")
	is.Equal(r.Str("mime_type"), "image/png")
	is.Equal(r.Body["size"], float64(len(pngBytes)))
	is.Equal(r.Body["livemode"], false)
	is.Equal(r.Body["metadata"].(map[string]any)["sku"], "CAM-01")
	is.Equal(r.Str("url"), e.URL()+"/files/"+id+"/contents") // a stable public URL

	again := e.Do("GET", "/v1/files/"+id, e.Test, nil)
	is.Equal(again.Status, 200)
	is.Equal(again.Str("url"), r.Str("url")) // stable on every retrieve

	res, body := e.fetch(r.Str("url"))
	is.Equal(res.StatusCode, 200)
	is.Equal(body, pngBytes)                                      // the bytes uploaded
	is.Equal(res.Header.Get("Content-Type"), "image/png")         // the sniffed type
	is.Equal(res.Header.Get("X-Content-Type-Options"), "nosniff") // never re-sniffed by browsers
	is.True(strings.HasPrefix(res.Header.Get("Content-Disposition"), "inline"))
	is.True(strings.Contains(res.Header.Get("Content-Disposition"), "camiseta azul.png"))
	is.True(slicesContain(e.storedFiles(), id)) // the bytes are on disk under the id
}

func slicesContain(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

// TestFileSignedURL: a private file's url is signed for one hour on the sandbox clock, fresh on
// every retrieve; an altered signature, another file's id or an expired URL is 403.
func TestFileSignedURL(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	r := e.uploadFile(e.Test, "dispute_evidence", "recibo.pdf", "application/pdf", pdfBytes)
	is.Equal(r.Status, 200)
	id, signed := r.Str("id"), r.Str("url")
	u, err := url.Parse(signed)
	is.NoErr(err)
	is.Equal(u.Path, "/files/"+id+"/contents")
	exp := u.Query().Get("expires")
	is.Equal(exp, fmt.Sprint(e.Clock.Now().Add(time.Hour).Unix())) // valid one hour
	is.True(len(u.Query().Get("signature")) == 64)

	res, body := e.fetch(signed)
	is.Equal(res.StatusCode, 200)
	is.Equal(body, pdfBytes)
	is.Equal(res.Header.Get("Content-Type"), "application/pdf")
	is.True(strings.HasPrefix(res.Header.Get("Content-Disposition"), "attachment")) // a document is downloaded

	// Without a signature, or with an altered one: 403.
	res, _ = e.fetch(e.URL() + "/files/" + id + "/contents")
	is.Equal(res.StatusCode, 403)
	sig := u.Query().Get("signature")
	altered := strings.Replace(signed, sig, strings.Repeat("0", 64), 1)
	res, _ = e.fetch(altered)
	is.Equal(res.StatusCode, 403)
	res, _ = e.fetch(strings.Replace(signed, "expires="+exp, fmt.Sprintf("expires=%d", e.Clock.Now().Add(48*time.Hour).Unix()), 1))
	is.Equal(res.StatusCode, 403) // a later expiry is not signed

	// The signature of one file does not open another.
	other := e.uploadFile(e.Test, "dispute_evidence", "outro.pdf", "application/pdf", pdfBytes)
	res, _ = e.fetch(strings.Replace(signed, id, other.Str("id"), 1))
	is.Equal(res.StatusCode, 403)

	// A fresh URL on every retrieve.
	e.advance(10 * time.Second)
	fresh := e.Do("GET", "/v1/files/"+id, e.Test, nil).Str("url")
	is.True(fresh != signed)

	// One hour later on the sandbox clock, the old URL is refused; a new retrieve works again.
	e.advance(time.Hour - 5*time.Second)
	res, _ = e.fetch(signed)
	is.Equal(res.StatusCode, 403) // replayed after its hour
	res, _ = e.fetch(fresh)
	is.Equal(res.StatusCode, 200) // still inside its own hour
	e.advance(10 * time.Second)
	res, _ = e.fetch(fresh)
	is.Equal(res.StatusCode, 403)
	res, body = e.fetch(e.Do("GET", "/v1/files/"+id, e.Test, nil).Str("url"))
	is.Equal(res.StatusCode, 200)
	is.Equal(body, pdfBytes)
}

// TestFileUploadRefused: every bad upload is a clear 400/413 naming the field, and nothing is
// stored (no row, no bytes).
func TestFileUploadRefused(t *testing.T) {
	e := newEnv(t)
	big := make([]byte, 10<<20+1)
	copy(big, pngBytes)
	for _, tc := range []struct {
		name   string
		parts  []uploadPart
		status int
		param  string
	}{
		{"empty file", []uploadPart{{name: "file", filename: "a.png", content: nil}, {name: "purpose", content: []byte("product_image")}}, 400, "file"},
		{"too large", []uploadPart{{name: "purpose", content: []byte("product_image")}, {name: "file", filename: "a.png", content: big}}, 413, "file"},
		{"gif as product image", []uploadPart{{name: "file", filename: "a.gif", content: gifBytes}, {name: "purpose", content: []byte("product_image")}}, 400, "file"},
		{"pdf as product image", []uploadPart{{name: "file", filename: "a.pdf", content: pdfBytes}, {name: "purpose", content: []byte("product_image")}}, 400, "file"},
		{"text as evidence", []uploadPart{{name: "file", filename: "a.txt", content: []byte("hello")}, {name: "purpose", content: []byte("dispute_evidence")}}, 400, "file"},
		{"forged content type", []uploadPart{{name: "file", filename: "a.pdf", contentType: "application/pdf", content: pngBytes}, {name: "purpose", content: []byte("dispute_evidence")}}, 400, "file"},
		{"html declared as png", []uploadPart{{name: "file", filename: "a.png", contentType: "image/png", content: []byte("<html><script>alert(1)</script>")}, {name: "purpose", content: []byte("product_image")}}, 400, "file"},
		{"parent path", []uploadPart{{name: "file", filename: "../../etc/a.png", content: pngBytes}, {name: "purpose", content: []byte("product_image")}}, 400, "file"},
		{"slash", []uploadPart{{name: "file", filename: "dir/a.png", content: pngBytes}, {name: "purpose", content: []byte("product_image")}}, 400, "file"},
		{"backslash", []uploadPart{{name: "file", filename: `C:\x\a.png`, content: pngBytes}, {name: "purpose", content: []byte("product_image")}}, 400, "file"},
		{"no file name", []uploadPart{{name: "file", contentType: "image/png", content: pngBytes}, {name: "purpose", content: []byte("product_image")}}, 400, "file"},
		{"no file", []uploadPart{{name: "purpose", content: []byte("product_image")}}, 400, "file"},
		{"no purpose", []uploadPart{{name: "file", filename: "a.png", content: pngBytes}}, 400, "purpose"},
		{"unknown purpose", []uploadPart{{name: "file", filename: "a.png", content: pngBytes}, {name: "purpose", content: []byte("avatar")}}, 400, "purpose"},
		{"two files", []uploadPart{{name: "file", filename: "a.png", content: pngBytes}, {name: "file", filename: "b.png", content: pngBytes}, {name: "purpose", content: []byte("product_image")}}, 400, "file"},
		{"unknown field", []uploadPart{{name: "file", filename: "a.png", content: pngBytes}, {name: "purpose", content: []byte("product_image")}, {name: "owner", content: []byte("x")}}, 400, "owner"},
		{"bad metadata key", []uploadPart{{name: "file", filename: "a.png", content: pngBytes}, {name: "purpose", content: []byte("product_image")}, {name: "metadata[a b]", content: []byte("x")}}, 400, "metadata"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			r := e.uploadParts(e.Test, tc.parts)
			is.Equal(r.Status, tc.status)    // refused
			is.Equal(r.ErrParam(), tc.param) // naming the field
			is.True(r.Str("id") == "")
		})
	}
	is := is.New(t)
	bad := e.uploadParts(e.Test, []uploadPart{{name: "file", filename: "a.png", content: pngBytes}, {name: "purpose", content: []byte("avatar")}})
	is.True(strings.Contains(string(bad.Raw), "expected one of product_image, business_logo, dispute_evidence, identity_document.")) // the purposes, readable
	js := e.Do("POST", "/v1/files", e.Test, map[string]any{"purpose": "product_image"})
	is.Equal(js.Status, 415)          // a JSON body is not an upload
	is.Equal(e.fileRows(), 0)         // nothing recorded
	is.Equal(len(e.storedFiles()), 0) // nothing on disk
	list := e.Do("GET", "/v1/files", e.Test, nil)
	is.Equal(len(list.Data()), 0)
}

// TestFileUploadInterrupted: a client that disconnects half way through its upload leaves
// nothing behind.
func TestFileUploadInterrupted(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	body, ct := multipartBody(t, uploadPart{name: "purpose", content: []byte("dispute_evidence")},
		uploadPart{name: "file", filename: "big.pdf", content: append(append([]byte{}, pdfBytes...), make([]byte, 4<<20)...)})
	u, _ := url.Parse(e.URL())
	conn, err := tls.Dial("tcp", u.Host, &tls.Config{InsecureSkipVerify: true}) // the test server's own certificate
	is.NoErr(err)
	fmt.Fprintf(conn, "POST /v1/files HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n", u.Host, e.Test, ct, len(body))
	_, err = conn.Write(body[:len(body)/2])
	is.NoErr(err)
	time.Sleep(100 * time.Millisecond)
	conn.Close() // half way

	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) && len(e.storedFiles()) > 0 {
		time.Sleep(20 * time.Millisecond)
	}
	is.Equal(len(e.storedFiles()), 0) // the partial bytes were removed
	is.Equal(e.fileRows(), 0)         // and no row was written
}

func TestFileListDelete(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	img := e.uploadFile(e.Test, "product_image", "a.png", "", pngBytes).Str("id")
	doc := e.uploadFile(e.Test, "dispute_evidence", "b.pdf", "", pdfBytes).Str("id")
	logo := e.uploadFile(e.Test, "business_logo", "c.png", "image/png", pngBytes).Str("id")

	all := e.Do("GET", "/v1/files", e.Test, nil)
	is.Equal(all.Status, 200)
	is.Equal(all.IDs(), []string{logo, doc, img}) // newest first
	for _, f := range all.Data() {
		is.True(f["url"] != nil) // every listed file carries its url
	}
	ev := e.Do("GET", "/v1/files?purpose=dispute_evidence", e.Test, nil)
	is.Equal(ev.IDs(), []string{doc})
	is.True(strings.Contains(ev.Data()[0]["url"].(string), "signature="))
	bad := e.Do("GET", "/v1/files?purpose=avatar", e.Test, nil)
	is.Equal(bad.Status, 400)
	is.Equal(bad.ErrParam(), "purpose")
	future := e.Do("GET", fmt.Sprintf("/v1/files?created_at[gt]=%d", e.Clock.Now().Unix()+10), e.Test, nil)
	is.Equal(len(future.Data()), 0)
	live := e.Do("GET", "/v1/files", e.Live, nil)
	is.Equal(len(live.Data()), 0) // the other environment sees none

	signed := e.Do("GET", "/v1/files/"+doc, e.Test, nil).Str("url")
	del := e.Do("DELETE", "/v1/files/"+doc, e.Test, nil)
	is.Equal(del.Status, 200)
	is.Equal(del.Body, map[string]any{"id": doc, "object": "file", "deleted": true})
	is.Equal(e.Do("GET", "/v1/files/"+doc, e.Test, nil).Status, 404) // gone
	is.Equal(e.Do("DELETE", "/v1/files/"+doc, e.Test, nil).Status, 404)
	res, _ := e.fetch(signed)
	is.Equal(res.StatusCode, 404)                 // its URL serves nothing
	is.True(!slicesContain(e.storedFiles(), doc)) // and its bytes are gone from disk
	is.True(slicesContain(e.storedFiles(), img))  // the others stay
	is.Equal(e.Do("GET", "/v1/files/"+img, e.Test, nil).Status, 200)
}

// TestFilePlatform: a platform key uploads and reads a connected organization's files only
// through the Organization header.
func TestFilePlatform(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	plat, platKey := e.NewPlatform("Plataforma")
	conn := e.CreateOrg(core.OrganizationInput{Name: "Conectada", ConnectedTo: *plat.Platform, ActivationStatus: domain.ActivationActive})
	connKey := e.NewKey(conn.ID, false, "read", "write")

	r := e.uploadFile(platKey, "dispute_evidence", "a.pdf", "", pdfBytes)
	is.Equal(r.Status, 403) // no header: refused
	r = e.uploadFile(platKey, "dispute_evidence", "a.pdf", "", pdfBytes, "Organization", e.Org.ID)
	is.Equal(r.Status, 403) // not a connected organization
	r = e.uploadFile(platKey, "dispute_evidence", "a.pdf", "", pdfBytes, "Organization", conn.ID)
	is.Equal(r.Status, 200)
	id := r.Str("id")
	is.Equal(e.Do("GET", "/v1/files/"+id, connKey, nil).Status, 200)                          // the connected organization owns it
	is.Equal(e.Do("GET", "/v1/files/"+id, platKey, nil, "Organization", conn.ID).Status, 200) // the platform reads it through the header
	is.Equal(e.Do("GET", "/v1/files/"+id, platKey, nil).Status, 403)
	is.Equal(e.Do("GET", "/v1/files/"+id, e.Test, nil).Status, 404) // another organization
}

// TestFileIdempotentUpload: an upload retried with its Idempotency-Key stores one file.
func TestFileIdempotentUpload(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	first := e.uploadFile(e.Test, "product_image", "a.png", "", pngBytes, "Idempotency-Key", "up-1")
	second := e.uploadFile(e.Test, "product_image", "a.png", "", pngBytes, "Idempotency-Key", "up-1")
	is.Equal(first.Status, 200)
	is.Equal(second.Str("id"), first.Str("id"))
	is.Equal(second.Header.Get("Idempotent-Replayed"), "true")
	other := e.uploadFile(e.Test, "product_image", "b.png", "", pngBytes, "Idempotency-Key", "up-1")
	is.Equal(other.Status, 400) // another upload with the key
	is.Equal(other.ErrCode(), "idempotency_key_reused")
	is.Equal(e.fileRows(), 1)
	is.Equal(len(e.storedFiles()), 1) // one copy of the bytes, no spool left
}

// TestFileCrashOrphans: whatever a crash leaves (bytes without a row, an interrupted temporary
// upload, a row whose bytes are gone), the next start sweeps it.
func TestFileCrashOrphans(t *testing.T) {
	dbtest.SkipOnPostgres(t, "no start-up sweep on PostgreSQL, where replicas share the files directory")
	is := is.New(t)
	e := newEnv(t)
	keep := e.uploadFile(e.Test, "product_image", "a.png", "", pngBytes).Str("id")
	lost := e.uploadFile(e.Test, "product_image", "b.png", "", pngBytes).Str("id")
	is.NoErr(os.Remove(filepath.Join(e.filesDir(), lost)))                                  // crash: row without bytes
	is.NoErr(os.WriteFile(filepath.Join(e.filesDir(), "file_0rphan"), pngBytes, 0o600))     // crash between bytes and row
	is.NoErr(os.WriteFile(filepath.Join(e.filesDir(), ".upload-123"), pngBytes[:3], 0o600)) // crash mid-upload

	server.New(e.Config) // a restart on the same database and directory
	is.Equal(e.storedFiles(), []string{keep})
	is.Equal(e.fileRows(), 1)
	is.Equal(e.Do("GET", "/v1/files/"+lost, e.Test, nil).Status, 404)
	is.Equal(e.Do("GET", "/v1/files/"+keep, e.Test, nil).Status, 200)
}

// TestProductImageFile: image_url may name a product_image file of the same organization; the
// product keeps its public URL.
func TestProductImageFile(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	img := e.uploadFile(e.Test, "product_image", "a.png", "", pngBytes).Str("id")
	p := e.Do("POST", "/v1/products", e.Test, map[string]any{"name": "Camiseta", "image_url": img})
	is.Equal(p.Status, 200)
	is.Equal(p.Str("image_url"), e.URL()+"/files/"+img+"/contents")
	res, body := e.fetch(p.Str("image_url"))
	is.Equal(res.StatusCode, 200)
	is.Equal(body, pngBytes)

	doc := e.uploadFile(e.Test, "dispute_evidence", "a.pdf", "", pdfBytes).Str("id")
	bad := e.Do("POST", "/v1/products/"+p.Str("id"), e.Test, map[string]any{"image_url": doc})
	is.Equal(bad.Status, 400) // another purpose
	is.Equal(bad.ErrParam(), "image_url")
	missing := e.Do("POST", "/v1/products", e.Test, map[string]any{"name": "X", "image_url": "file_doesnotexist"})
	is.Equal(missing.Status, 400)
	is.Equal(missing.ErrParam(), "image_url")
	liveImg := e.Do("POST", "/v1/products", e.Live, map[string]any{"name": "X", "image_url": img})
	is.Equal(liveImg.Status, 400) // the other environment's file
}

// TestFileMemoryDB: a --db :memory: style server without FilesDir still stores files (in a
// private temporary directory).
func TestFileNoFilesDir(t *testing.T) {
	is := is.New(t)
	e := newEnv(t, func(c *server.Config) { c.FilesDir = "" })
	r := e.uploadFile(e.Test, "product_image", "a.png", "", pngBytes)
	is.Equal(r.Status, 200)
	res, body := e.fetch(r.Str("url"))
	is.Equal(res.StatusCode, 200)
	is.True(bytes.Equal(body, pngBytes))
}
