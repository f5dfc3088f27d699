package server_test

import (
	"bytes"
	"io"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"testing"
)

// Tiny files whose first bytes are what the sniffer reads (a PNG signature, a JPEG SOI, a PDF
// header).
var (
	pngBytes = append([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), bytes.Repeat([]byte{7}, 64)...)
	pdfBytes = []byte("%PDF-1.4\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n")
	gifBytes = []byte("GIF89a\x01\x00\x01\x00\x00\x00\x00;")
)

// uploadPart is one part of a multipart upload; a part with a filename is a file part.
type uploadPart struct {
	name, filename, contentType string
	content                     []byte
}

// multipartBody encodes parts and returns the body and its Content-Type.
func multipartBody(t testing.TB, parts ...uploadPart) ([]byte, string) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for _, p := range parts {
		h := textproto.MIMEHeader{}
		cd := `form-data; name="` + p.name + `"`
		if p.filename != "" || p.contentType != "" {
			cd += `; filename="` + p.filename + `"`
		}
		h.Set("Content-Disposition", cd)
		if p.contentType != "" {
			h.Set("Content-Type", p.contentType)
		}
		w, err := mw.CreatePart(h)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(p.content)
	}
	mw.Close()
	return buf.Bytes(), mw.FormDataContentType()
}

// uploadFile sends POST /v1/files with a file part and a purpose over HTTPS.
func (e *testEnv) uploadFile(token, purpose, filename, contentType string, content []byte, headers ...string) resp {
	e.t.Helper()
	parts := []uploadPart{{name: "file", filename: filename, contentType: contentType, content: content}}
	if purpose != "" {
		parts = append(parts, uploadPart{name: "purpose", content: []byte(purpose)})
	}
	return e.uploadParts(token, parts, headers...)
}

func (e *testEnv) uploadParts(token string, parts []uploadPart, headers ...string) resp {
	e.t.Helper()
	return e.uploadTo("/v1/files", token, parts, headers...)
}

// uploadTo sends the parts to path (POST /v1/files or /api/v1/files).
func (e *testEnv) uploadTo(path, token string, parts []uploadPart, headers ...string) resp {
	e.t.Helper()
	body, ct := multipartBody(e.t, parts...)
	req := e.NewRequest("POST", path, bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", ct)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	r, err := e.Send(req)
	if err != nil {
		e.t.Fatal(err)
	}
	return r
}

// fetch GETs an absolute URL (a file's url) with the server's client and returns the answer.
func (e *testEnv) fetch(url string) (*http.Response, []byte) {
	e.t.Helper()
	res, err := e.Client.Get(url)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res, b
}
