package core

import (
	"net/http"
	"slices"
	"strings"

	"troco/db"
	"troco/server/domain"
	"troco/server/files"
)

// Upload is a file received by an adapter and spooled to disk (files.Temp), with what the
// request said about it. CheckUpload decides whether it may be stored.
type Upload struct {
	Purpose  string
	Filename string
	// DeclaredType is the Content-Type the client gave the part ("" when none).
	DeclaredType string
	Size         int64
	Head         []byte
	SHA256       string
	Metadata     map[string]string
}

// CheckUpload applies CONTRACT 11 to an upload and returns the file to record: a known purpose,
// a safe name, 1 byte to 10 MiB, a sniffed type the purpose accepts and that the declared type
// does not contradict. Every refusal is a 400 naming the param (413 beyond the size limit).
func CheckUpload(u Upload) (*domain.File, error) {
	if u.Purpose == "" {
		return nil, domain.Missing("purpose")
	}
	if !slices.Contains(domain.FilePurposes, u.Purpose) {
		return nil, domain.Invalid("purpose", "Invalid purpose %q: expected one of %s.", u.Purpose, strings.Join(domain.FilePurposes, ", "))
	}
	if err := files.CheckFilename(u.Filename); err != nil {
		return nil, domain.Invalid("file", "Invalid file name: %s.", err.Error())
	}
	if u.Size == 0 {
		return nil, domain.Invalid("file", "The file is empty.")
	}
	if u.Size > files.MaxSize {
		return nil, FileTooLarge()
	}
	sniffed := files.Sniff(u.Head)
	accepted := files.Accepted(u.Purpose)
	if !slices.Contains(accepted, sniffed) {
		return nil, domain.Invalid("file", "Files of purpose %s must be %s; the bytes of this file are %s.", u.Purpose, files.Extensions(accepted), sniffed)
	}
	if d := u.DeclaredType; d != "" && d != "application/octet-stream" && d != sniffed && !(d == "image/jpg" && sniffed == "image/jpeg") {
		return nil, domain.Invalid("file", "The file part declares Content-Type %s but its bytes are %s.", d, sniffed)
	}
	if err := domain.ValidateMetadata(u.Metadata); err != nil {
		return nil, err
	}
	md := domain.Metadata{}
	for k, v := range u.Metadata {
		md[k] = v
	}
	return &domain.File{ID: domain.NewID(domain.PrefixFile), Purpose: u.Purpose, Filename: u.Filename, MimeType: sniffed, Size: u.Size,
		SHA256: u.SHA256, Metadata: md}, nil
}

// FileTooLarge is the 413 of an upload beyond 10 MiB.
func FileTooLarge() *domain.Error {
	return &domain.Error{Status: http.StatusRequestEntityTooLarge, Type: domain.TypeInvalidRequest, Code: domain.CodeRequestTooLarge, Param: "file",
		Message: "Files can be at most 10 MiB."}
}

// CreateFile records a checked file whose bytes are committed under f.ID.
func CreateFile(tx *db.Tx, a domain.Actor, f *domain.File) (*domain.File, error) {
	if err := tx.CreateFile(a.Scope, f); err != nil {
		return nil, err
	}
	return f, nil
}

// GetFile returns a file of the actor's scope.
func GetFile(tx *db.Tx, s domain.Scope, id string) (*domain.File, error) {
	f, err := tx.FindFileByID(s, id)
	return f, notFound(err, "id", "file", id)
}

// DeleteFile deletes a file's row; the adapter removes its bytes once this commits.
func DeleteFile(tx *db.Tx, a domain.Actor, id string) (*domain.Deleted, error) {
	f, err := GetFile(tx, a.Scope, id)
	if err != nil {
		return nil, err
	}
	if f.Purpose == domain.PurposeDisputeEvidence {
		// Evidence of a dispute still open must stay readable by whoever reviews it.
		dp, err := tx.OpenDisputeUsingFile(a.Scope, id)
		if err != nil {
			return nil, err
		}
		if dp != "" {
			return nil, domain.Conflict(domain.CodeResourceStateConflict, "File %s is evidence of dispute %s, which is not closed; it can be deleted once the dispute closes.", id, dp)
		}
	}
	if err := tx.DeleteFile(a.Scope, id); err != nil {
		return nil, err
	}
	return &domain.Deleted{ID: id, Object: "file", Deleted: true}, nil
}

// FileOfPurpose returns a file of the scope with the given purpose for a reference in param (a
// product's image_url, a dispute's evidence): a missing, foreign or other-purpose file is a 400
// naming param.
func FileOfPurpose(tx *db.Tx, s domain.Scope, id, purpose, param string) (*domain.File, error) {
	f, err := tx.FindFileByID(s, id)
	if err != nil {
		if err == db.ErrNotFound {
			return nil, domain.Invalid(param, "No such file: '%s'.", id)
		}
		return nil, err
	}
	if f.Purpose != purpose {
		return nil, domain.Invalid(param, "File %s has purpose %s; %s takes a %s file.", id, f.Purpose, param, purpose)
	}
	return f, nil
}
