package server_test

import (
	"database/sql"
	"testing"
	"troco/db/dbtest"

	"github.com/matryer/is"

	"troco/server"
)

// TestActivationDocumentIsFile: the identity document uploaded in the hosted activation form is
// an identity_document file of the organization, served by a signed URL.
func TestActivationDocumentIsFile(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	p := newActPlatform(e, "Plataforma")
	org := p.connect("Loja", "11444777000161")
	p.activate(org)
	key := e.NewKey(org, false, "read")
	list := e.Do("GET", "/v1/files?purpose=identity_document", key, nil)
	is.Equal(list.Status, 200)
	is.Equal(len(list.Data()), 1) // the uploaded document
	f := list.Data()[0]
	is.Equal(f["filename"], "rg.pdf")
	is.Equal(f["mime_type"], "application/pdf")
	is.Equal(f["livemode"], false) // the session's environment
	res, body := e.fetch(f["url"].(string))
	is.Equal(res.StatusCode, 200)
	is.Equal(body, samplePDF)
	is.Equal(len(e.Do("GET", "/v1/files", e.Test, nil).Data()), 0) // nobody else's
}

// TestLegacyActivationDocumentsMoved: documents an older troco kept inside the database are
// moved to files at start, with the same id, and their blobs removed.
func TestLegacyActivationDocumentsMoved(t *testing.T) {
	dbtest.SkipOnPostgres(t, "writes into the SQLite file directly")
	is := is.New(t)
	e := newEnv(t)
	raw, err := sql.Open("sqlite", e.Path)
	is.NoErr(err)
	_, err = raw.Exec(`INSERT INTO activation_documents (id, org_id, livemode, session_id, filename, mime_type, size, sha256, content, created_at)
		VALUES ('file_legacy1', ?, 0, 'as_old', 'cnh.pdf', 'application/pdf', ?, 'x', ?, 1700000000)`, e.Org.ID, len(samplePDF), samplePDF)
	is.NoErr(err)
	raw.Close()

	server.New(e.Config) // the next start
	r := e.Do("GET", "/v1/files/file_legacy1", e.Test, nil)
	is.Equal(r.Status, 200)
	is.Equal(r.Str("purpose"), "identity_document")
	is.Equal(r.Str("filename"), "cnh.pdf")
	res, body := e.fetch(r.Str("url"))
	is.Equal(res.StatusCode, 200)
	is.Equal(body, samplePDF)
	raw, _ = sql.Open("sqlite", e.Path)
	defer raw.Close()
	var n int
	is.NoErr(raw.QueryRow("SELECT COUNT(*) FROM activation_documents").Scan(&n))
	is.Equal(n, 0) // one mechanism: the blob is gone
}
