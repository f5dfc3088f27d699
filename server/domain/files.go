package domain

// File is an uploaded file (SPEC 2.5). URL is filled by the API for each answer: a stable URL for
// public purposes, a signed one valid one hour for private ones.
type File struct {
	ID        string   `json:"id"`
	Object    string   `json:"object"`
	CreatedAt Time     `json:"created_at"`
	Filename  string   `json:"filename"`
	Livemode  bool     `json:"livemode"`
	Metadata  Metadata `json:"metadata"`
	MimeType  string   `json:"mime_type"`
	Purpose   string   `json:"purpose"`
	Size      int64    `json:"size"`
	UpdatedAt Time     `json:"updated_at"`
	URL       *string  `json:"url"`

	// SHA256 is the hex digest of the bytes; ActivationSession links an identity document to the
	// hosted activation session it was uploaded in. Neither is part of the API object.
	SHA256            string `json:"-"`
	ActivationSession string `json:"-"`
}

// File purposes (CONTRACT 11).
const (
	PurposeProductImage     = "product_image"
	PurposeBusinessLogo     = "business_logo"
	PurposeDisputeEvidence  = "dispute_evidence"
	PurposeIdentityDocument = "identity_document"
)

// FilePurposes lists every purpose, in the order the API reference shows them.
var FilePurposes = []string{PurposeProductImage, PurposeBusinessLogo, PurposeDisputeEvidence, PurposeIdentityDocument}

// PublicPurpose reports whether files of a purpose get a stable, unsigned URL.
func PublicPurpose(p string) bool { return p == PurposeProductImage || p == PurposeBusinessLogo }
