package server

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strconv"
	"strings"

	"troco/db"
	"troco/server/core"
	"troco/server/domain"
	"troco/server/files"
)

// maxUploadBody bounds a POST /v1/files body: the file plus its form fields and boundaries.
const maxUploadBody = files.MaxSize + 1<<20

// isUpload reports whether r is a file upload, whose body is streamed, never read whole.
func isUpload(r *http.Request) bool {
	return r.Method == http.MethodPost && (r.URL.Path == "/v1/files" || r.URL.Path == "/api/v1/files")
}

// fileURL fills f.url for an answer: stable for public purposes, signed for 1 hour otherwise.
func (s *Server) fileURL(r *http.Request, f *domain.File) *domain.File {
	u := s.files.URL(s.origin(r), f, s.cfg.Clock.Now())
	f.URL = &u
	return f
}

func (s *Server) handleFileCreate() http.Handler { return s.handleFileCreateAs(http.StatusOK) }

// handleFileCreateAs is the upload answering ok on success (/api/v1: 201 with Location).
func (s *Server) handleFileCreateAs(ok int) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tmp, u, err := s.readUpload(w, r)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		f, err := core.CheckUpload(u)
		if err != nil {
			tmp.Discard()
			s.writeError(w, r, err)
			return
		}
		if err := s.files.Commit(tmp, f.ID); err != nil {
			s.writeError(w, r, err)
			return
		}
		s.mutateAs(w, r, ok, func(tx *db.Tx, a domain.Actor) (any, error) {
			out, err := core.CreateFile(tx, a, f)
			if err != nil {
				return nil, err
			}
			if ok != http.StatusOK {
				return shaped(s.fileURL(r, out)), nil
			}
			return s.fileURL(r, out), nil
		})
		// The bytes were committed before the row: if the row did not commit, remove them now
		// (a crash here leaves them to the start-up sweep).
		if !s.fileRowExists(f.ID) {
			_ = s.files.Remove(f.ID)
		}
	})
}

func (s *Server) fileRowExists(id string) bool {
	err := s.db.Read(context.Background(), func(tx *db.Tx) error {
		_, err := tx.FindFileAnyScope(id)
		return err
	})
	return !errors.Is(err, db.ErrNotFound)
}

// readUpload streams a multipart/form-data body: the file part goes to a temporary file of the
// store (never whole in memory), purpose and metadata[key] are read bounded; any other field is
// a 400 naming it. On error nothing remains on disk.
func (s *Server) readUpload(w http.ResponseWriter, r *http.Request) (*files.Temp, core.Upload, error) {
	var u core.Upload
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/form-data" {
		return nil, u, &domain.Error{Status: http.StatusUnsupportedMediaType, Type: domain.TypeInvalidRequest, Code: domain.CodeUnsupportedMediaType, Param: "file",
			Message: "Upload files as multipart/form-data with the fields file and purpose."}
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxUploadBody)
	mr, err := r.MultipartReader()
	if err != nil {
		return nil, u, domain.Invalid("file", "The multipart body could not be read: %s.", err.Error())
	}
	var tmp *files.Temp
	fail := func(e error) (*files.Temp, core.Upload, error) {
		tmp.Discard()
		return nil, u, e
	}
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fail(uploadReadError(err))
		}
		name := part.FormName()
		switch {
		case name == "file":
			if tmp != nil {
				return fail(domain.Invalid("file", "Send one file per request."))
			}
			_, params, _ := mime.ParseMediaType(part.Header.Get("Content-Disposition"))
			u.Filename = params["filename"] // raw: Part.FileName() would strip a path silently
			if err := files.CheckFilename(u.Filename); err != nil {
				return fail(domain.Invalid("file", "Invalid file name: %s.", err.Error()))
			}
			if ct := part.Header.Get("Content-Type"); ct != "" {
				if m, _, err := mime.ParseMediaType(ct); err == nil {
					u.DeclaredType = m
				} else {
					u.DeclaredType = ct
				}
			}
			t, err := s.files.Spool(part, files.MaxSize)
			if errors.Is(err, files.ErrTooLarge) {
				return fail(core.FileTooLarge())
			}
			if err != nil {
				return fail(uploadReadError(err))
			}
			tmp = t
			u.Size, u.Head, u.SHA256 = t.Size, t.Head, t.SHA256
		case name == "purpose":
			v, err := readField(part, name, 64)
			if err != nil {
				return fail(err)
			}
			u.Purpose = v
		case strings.HasPrefix(name, "metadata[") && strings.HasSuffix(name, "]"):
			v, err := readField(part, name, 4*domain.MaxMetadataValueLen)
			if err != nil {
				return fail(err)
			}
			if u.Metadata == nil {
				u.Metadata = map[string]string{}
			}
			u.Metadata[name[len("metadata["):len(name)-1]] = v
		case name == "":
			return fail(domain.Invalid("file", "Every multipart part needs a name."))
		default:
			return fail(domain.Invalid(name, "Received unknown parameter: %s.", name))
		}
	}
	if tmp == nil {
		return nil, u, domain.Missing("file")
	}
	return tmp, u, nil
}

func readField(p *multipart.Part, name string, limit int64) (string, error) {
	b, err := io.ReadAll(io.LimitReader(p, limit+1))
	if err != nil {
		return "", uploadReadError(err)
	}
	if int64(len(b)) > limit {
		return "", domain.Invalid(name, "%s is too long.", name)
	}
	return string(b), nil
}

// uploadReadError turns a failed read of the body into its answer: 413 beyond the body limit,
// otherwise 400 (a body cut short: an interrupted upload, or malformed multipart).
func uploadReadError(err error) error {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return core.FileTooLarge()
	}
	return domain.Invalid("file", "The upload was interrupted or is not valid multipart/form-data; nothing was stored.")
}

func (s *Server) handleFileGet() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := pathID(r)
		s.read(w, r, func(tx *db.Tx, a domain.Actor) (any, error) {
			f, err := core.GetFile(tx, a.Scope, id)
			if err != nil {
				return nil, err
			}
			return s.fileURL(r, f), nil
		})
	})
}

func (s *Server) handleFileList() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q, err := parseList(r, "purpose")
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		purpose, err := q.oneOf("purpose", domain.FilePurposes...)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		s.read(w, r, func(tx *db.Tx, a domain.Actor) (any, error) {
			items, more, err := tx.ListFiles(a.Scope, db.FileFilter{Purpose: purpose}, q.ListParams)
			for _, f := range items {
				s.fileURL(r, f)
			}
			return listOf(r, items, more), err
		})
	})
}

func (s *Server) handleFileDelete() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := pathID(r)
		s.mutate(w, r, func(tx *db.Tx, a domain.Actor) (any, error) { return core.DeleteFile(tx, a, id) })
		// The row is gone once the delete committed; the bytes follow (a crash in between leaves
		// them to the start-up sweep).
		if domain.HasPrefix(id, domain.PrefixFile) && !s.fileRowExists(id) {
			_ = s.files.Remove(id)
		}
	})
}

// handleFileContents serves the bytes of a file: public purposes to anyone with the URL, private
// ones only with a valid, unexpired signature for this id (403 otherwise, on the sandbox clock).
func (s *Server) handleFileContents() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := pathID(r)
		q := r.URL.Query()
		var f *domain.File
		err := s.db.Read(r.Context(), func(tx *db.Tx) error {
			var err error
			f, err = tx.FindFileAnyScope(id)
			return err
		})
		signed := q.Has("signature") || q.Has("expires")
		switch {
		case errors.Is(err, db.ErrNotFound):
			s.writeError(w, r, &domain.Error{Status: http.StatusNotFound, Type: domain.TypeInvalidRequest, Code: domain.CodeResourceMissing, Message: "No such file."})
			return
		case err != nil:
			s.writeError(w, r, err)
			return
		case !domain.PublicPurpose(f.Purpose) || signed:
			if !s.files.Verify(id, q.Get("expires"), q.Get("signature"), s.cfg.Clock.Now()) {
				s.writeError(w, r, domain.Forbidden("This file URL is expired or its signature is invalid: retrieve the file again (GET /v1/files/{id}) for a fresh URL."))
				return
			}
		}
		fh, err := s.files.OpenFile(id)
		if err != nil {
			s.writeError(w, r, &domain.Error{Status: http.StatusNotFound, Type: domain.TypeInvalidRequest, Code: domain.CodeResourceMissing, Message: "No such file."})
			return
		}
		defer fh.Close()
		h := w.Header()
		h.Set("Content-Type", f.MimeType)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Content-Security-Policy", "default-src 'none'; img-src 'self'; style-src 'unsafe-inline'; sandbox")
		disposition := "attachment"
		if strings.HasPrefix(f.MimeType, "image/") {
			disposition = "inline"
		}
		cd := mime.FormatMediaType(disposition, map[string]string{"filename": f.Filename})
		if cd == "" {
			cd = disposition // a name FormatMediaType cannot encode: no name rather than a broken header
		}
		h.Set("Content-Disposition", cd)
		if domain.PublicPurpose(f.Purpose) {
			h.Set("Cache-Control", "public, max-age=3600")
		} else {
			exp, _ := strconv.ParseInt(q.Get("expires"), 10, 64)
			h.Set("Cache-Control", "private, max-age="+strconv.FormatInt(max(0, exp-s.cfg.Clock.Now().Unix()), 10))
		}
		http.ServeContent(w, r, "", f.CreatedAt.Time, fh)
	})
}

// openFiles opens the files directory, moves identity documents an older troco kept as blobs
// into it, and sweeps orphans (bytes without a row, rows without bytes, interrupted uploads).
// Failures are logged: the API answers 500 for files rather than refusing to start.
func (s *Server) openFiles() *files.Store {
	key := s.cfg.Secrets.DeriveKey("file url")
	st := files.Temporary(key)
	if s.cfg.FilesDir != "" {
		var err error
		if st, err = files.Open(s.cfg.FilesDir, key); err != nil {
			// The API answers 500 for files; everything else keeps working.
			s.log.Error("files: open the files directory", "err", err)
			st = files.Temporary(key)
		}
	}
	ctx := context.Background()
	if err := s.moveLegacyDocuments(ctx, st); err != nil {
		s.log.Error("files: move identity documents", "err", err)
	}
	if s.db != nil && s.db.Engine() == "postgres" {
		// Replicas share the database and (they must) the files directory: one starting while
		// another is mid-upload would take the new bytes for an orphan, and one started without
		// the shared directory would delete every file's record. No sweep there.
		s.log.Info("files: start-up sweep skipped on PostgreSQL (replicas share the files directory)")
		return st
	}
	if err := SweepFiles(ctx, s.db, st); err != nil {
		s.log.Error("files: sweep", "err", err)
	}
	return st
}

// SweepFiles removes the orphans a crash can leave in the files directory and the rows whose
// bytes are gone. Run before serving.
func SweepFiles(ctx context.Context, d *db.DB, st *files.Store) error {
	var rows map[string]bool
	if err := d.Read(ctx, func(tx *db.Tx) error {
		var err error
		rows, err = tx.FileIDs()
		return err
	}); err != nil {
		return err
	}
	_, missing, err := st.Sweep(rows)
	if err != nil || len(missing) == 0 {
		return err
	}
	return d.Write(ctx, func(tx *db.Tx) error {
		for _, id := range missing {
			if err := tx.DeleteFileAnyScope(id); err != nil {
				return err
			}
		}
		return nil
	})
}

// moveLegacyDocuments moves identity documents stored as blobs (activation_documents) to the
// files directory as identity_document files with the same ids: bytes first, then the row and
// the blob's deletion in one transaction.
func (s *Server) moveLegacyDocuments(ctx context.Context, st *files.Store) error {
	for {
		var docs []db.LegacyActivationDocument
		if err := s.db.Read(ctx, func(tx *db.Tx) error {
			var err error
			docs, err = tx.LegacyActivationDocuments(20)
			return err
		}); err != nil || len(docs) == 0 {
			return err
		}
		for _, d := range docs {
			if err := st.Write(d.ID, d.Content); err != nil {
				return err
			}
		}
		if err := s.db.Write(ctx, func(tx *db.Tx) error {
			for _, d := range docs {
				if err := tx.MoveLegacyActivationDocument(d); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			return err
		}
	}
}

// spoolBody copies an upload's body to a temporary file of the store (never whole in memory),
// writes its fingerprint to sum, then makes the temporary file the request body. The caller
// discards it after the request. The fingerprint is of the parts (names, file names, types and
// contents), not of the raw bytes: a client retrying an upload re-encodes it with another
// multipart boundary.
func (s *Server) spoolBody(w http.ResponseWriter, r *http.Request, sum io.Writer) (*files.Temp, error) {
	t, err := s.files.Spool(http.MaxBytesReader(w, r.Body, maxUploadBody), maxUploadBody)
	if errors.Is(err, files.ErrTooLarge) {
		return nil, core.FileTooLarge()
	}
	if err != nil {
		return nil, uploadReadError(err)
	}
	rd, err := t.Reader()
	if err != nil {
		t.Discard()
		return nil, err
	}
	if _, params, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err == nil && params["boundary"] != "" {
		mr := multipart.NewReader(rd, params["boundary"])
		for {
			part, err := mr.NextPart()
			if err != nil {
				break // the end, or a malformed body the handler refuses
			}
			h := sha256.New()
			if _, err := io.Copy(h, part); err != nil {
				break
			}
			fmt.Fprintf(sum, "%q %q %q %x\n", part.FormName(), part.Header.Get("Content-Disposition"), part.Header.Get("Content-Type"), h.Sum(nil))
		}
	} else {
		io.Copy(sum, rd)
	}
	if rd, err = t.Reader(); err != nil {
		t.Discard()
		return nil, err
	}
	r.Body = io.NopCloser(rd)
	return t, nil
}
