package db

import (
	"troco/server/domain"
)

const fileCols = "id, livemode, purpose, filename, mime_type, size, sha256, metadata, activation_session_id, created_at, updated_at"

func scanFile(s scanner) (*domain.File, error) {
	var f domain.File
	var live int
	var metadata string
	var session *string
	var created, updated int64
	if err := s.Scan(&f.ID, &live, &f.Purpose, &f.Filename, &f.MimeType, &f.Size, &f.SHA256, &metadata, &session, &created, &updated); err != nil {
		return nil, err
	}
	f.Object = "file"
	f.Livemode = live == 1
	f.Metadata = parseMetadata(metadata)
	if session != nil {
		f.ActivationSession = *session
	}
	f.CreatedAt, f.UpdatedAt = domain.Unix(created), domain.Unix(updated)
	return &f, nil
}

// CreateFile inserts the row of a file whose bytes are already stored under f.ID.
func (tx *Tx) CreateFile(s domain.Scope, f *domain.File) error {
	f.Object = "file"
	f.Livemode = s.Livemode
	f.CreatedAt, f.UpdatedAt = domain.At(tx.Now), domain.At(tx.Now)
	if f.Metadata == nil {
		f.Metadata = domain.Metadata{}
	}
	var session *string
	if f.ActivationSession != "" {
		session = &f.ActivationSession
	}
	_, err := tx.exec(`INSERT INTO files (id, org_id, livemode, purpose, filename, mime_type, size, sha256, metadata, activation_session_id, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		f.ID, s.OrgID, boolInt(s.Livemode), f.Purpose, f.Filename, f.MimeType, f.Size, f.SHA256, metadataJSON(f.Metadata), session, tx.now(), tx.now())
	return translate(err, "create file")
}

// FindFileByID returns a file in scope.
func (tx *Tx) FindFileByID(s domain.Scope, id string) (*domain.File, error) {
	f, err := scanFile(tx.queryRow("SELECT "+fileCols+" FROM files WHERE id = ? AND org_id = ? AND livemode = ?", id, s.OrgID, boolInt(s.Livemode)))
	return f, translate(err, "find file")
}

// FindFileAnyScope returns a file by id alone: the contents URL, whose signature (or public
// purpose) is the caller's authority, and the hosted activation form (which checks the session).
func (tx *Tx) FindFileAnyScope(id string) (*domain.File, error) {
	f, err := scanFile(tx.queryRow("SELECT "+fileCols+" FROM files WHERE id = ?", id))
	return f, translate(err, "find file")
}

// DeleteFile removes a file's row (the caller removes its bytes after the commit).
func (tx *Tx) DeleteFile(s domain.Scope, id string) error {
	res, err := tx.exec("DELETE FROM files WHERE id = ? AND org_id = ? AND livemode = ?", id, s.OrgID, boolInt(s.Livemode))
	return affectedOne(res, err, "delete file")
}

// DeleteFileAnyScope removes a row by id (the start-up sweep, for a row whose bytes are gone).
func (tx *Tx) DeleteFileAnyScope(id string) error {
	_, err := tx.exec("DELETE FROM files WHERE id = ?", id)
	return translate(err, "delete file")
}

// FileIDs returns the id of every file row (the start-up sweep).
func (tx *Tx) FileIDs() (map[string]bool, error) {
	rows, err := tx.query("SELECT id FROM files")
	if err != nil {
		return nil, translate(err, "list file ids")
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, translate(err, "list file ids")
		}
		out[id] = true
	}
	return out, translate(rows.Err(), "list file ids")
}

// FileFilter narrows ListFiles.
type FileFilter struct {
	Purpose string
}

// ListFiles pages the files of a scope, newest first.
func (tx *Tx) ListFiles(s domain.Scope, f FileFilter, p ListParams) ([]*domain.File, bool, error) {
	var w filter
	payScope(&w, s)
	if f.Purpose != "" {
		w.add("purpose = ?", f.Purpose)
	}
	return page(tx, "files", fileCols, w, p, scanFile)
}

// LegacyActivationDocument is an identity document still stored as a blob by an older troco.
type LegacyActivationDocument struct {
	ActivationDocument
	CreatedAt int64
}

// LegacyActivationDocuments returns up to limit documents of the old blob table not yet moved to
// files (the start-up migration moves them, then deletes their blobs).
func (tx *Tx) LegacyActivationDocuments(limit int) ([]LegacyActivationDocument, error) {
	rows, err := tx.query(`SELECT id, org_id, livemode, session_id, filename, mime_type, size, sha256, content, created_at
		FROM activation_documents ORDER BY seq LIMIT ?`, limit)
	if err != nil {
		return nil, translate(err, "list activation documents")
	}
	defer rows.Close()
	var out []LegacyActivationDocument
	for rows.Next() {
		var d LegacyActivationDocument
		var live int
		if err := rows.Scan(&d.ID, &d.OrgID, &live, &d.SessionID, &d.Filename, &d.MIMEType, &d.Size, &d.SHA256, &d.Content, &d.CreatedAt); err != nil {
			return nil, translate(err, "list activation documents")
		}
		d.Livemode = live == 1
		out = append(out, d)
	}
	return out, translate(rows.Err(), "list activation documents")
}

// MoveLegacyActivationDocument records a moved document as an identity_document file (its id
// kept, so organizations' profiles still name it) and deletes the blob row.
func (tx *Tx) MoveLegacyActivationDocument(d LegacyActivationDocument) error {
	_, err := tx.exec(`INSERT INTO files (id, org_id, livemode, purpose, filename, mime_type, size, sha256, metadata, activation_session_id, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, '{}', ?, ?, ?) ON CONFLICT (id) DO NOTHING`,
		d.ID, d.OrgID, boolInt(d.Livemode), domain.PurposeIdentityDocument, d.Filename, d.MIMEType, d.Size, d.SHA256, d.SessionID, d.CreatedAt, d.CreatedAt)
	if err != nil {
		return translate(err, "move activation document")
	}
	_, err = tx.exec("DELETE FROM activation_documents WHERE id = ?", d.ID)
	return translate(err, "move activation document")
}
