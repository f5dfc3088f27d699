package pix

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/x509"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"

	jose "github.com/go-jose/go-jose/v4"
)

// The payload a dynamic BR Code's location answers (BCB "Manual de Padrões para Iniciação do
// Pix", the JWS the payer's PSP fetches from field 26-25): a charge (cob) or, for the PIX code
// printed on a boleto, a charge with a due date (cobv).

// Location statuses of the payload (API Pix).
const (
	StatusActive    = "ATIVA"
	StatusCompleted = "CONCLUIDA"
	StatusRemoved   = "REMOVIDA_PELO_USUARIO_RECEBEDOR"
)

// LocationPayload is the JWS payload.
type LocationPayload struct {
	Revisao     int        `json:"revisao"`
	Calendario  Calendario `json:"calendario"`
	Devedor     *Devedor   `json:"devedor,omitempty"`
	Valor       Valor      `json:"valor"`
	Chave       string     `json:"chave"`
	TxID        string     `json:"txid"`
	Status      string     `json:"status"`
	Solicitacao string     `json:"solicitacaoPagador,omitempty"`
}

// Calendario is the payload's time block: creation and presentation instants (RFC 3339), and
// either expiracao (seconds after creation, a cob) or dataDeVencimento with
// validadeAposVencimento (days, a cobv).
type Calendario struct {
	Criacao                string `json:"criacao"`
	Apresentacao           string `json:"apresentacao"`
	Expiracao              int64  `json:"expiracao,omitempty"`
	DataDeVencimento       string `json:"dataDeVencimento,omitempty"`
	ValidadeAposVencimento *int   `json:"validadeAposVencimento,omitempty"`
}

// Devedor is the payer: a CPF or a CNPJ and a name.
type Devedor struct {
	CPF  string `json:"cpf,omitempty"`
	CNPJ string `json:"cnpj,omitempty"`
	Nome string `json:"nome"`
}

// Valor is the amount block; original is a dot decimal ("123.45").
type Valor struct {
	Original string `json:"original"`
}

// SigningKey is the ES256 key that signs location payloads, with its key id and the
// certificate chain of its public key (the JWKS's x5c: the key's certificate first).
type SigningKey struct {
	Key   *ecdsa.PrivateKey
	KID   string
	Chain []*x509.Certificate
}

// DeriveSigningKey derives a P-256 key deterministically from seed (a secret of at least 32
// bytes, such as a purpose key of the master keyring), so every replica with the same master key
// signs with the same key and nothing new is stored. The key id is the JWK thumbprint.
func DeriveSigningKey(seed []byte) (*SigningKey, error) {
	if len(seed) < 32 {
		return nil, errors.New("pix: signing seed must be at least 32 bytes")
	}
	for counter := uint32(0); counter < 100; counter++ {
		mac := hmac.New(sha256.New, seed)
		var c [4]byte
		binary.BigEndian.PutUint32(c[:], counter)
		mac.Write([]byte("pix location ES256"))
		mac.Write(c[:])
		k, err := ecdsa.ParseRawPrivateKey(elliptic.P256(), mac.Sum(nil))
		if err != nil {
			continue // zero or not below the group order: try the next candidate
		}
		jwk := jose.JSONWebKey{Key: &k.PublicKey, Algorithm: string(jose.ES256), Use: "sig"}
		thumb, err := jwk.Thumbprint(crypto.SHA256)
		if err != nil {
			return nil, err
		}
		return &SigningKey{Key: k, KID: fmt.Sprintf("%x", thumb[:16])}, nil
	}
	return nil, errors.New("pix: no valid signing key derived")
}

// JWKS returns the public key set published at the location's jku; with a chain, the key
// carries it as x5c (and the certificate's thumbprints x5t, x5t#S256).
func (k *SigningKey) JWKS() jose.JSONWebKeySet {
	jwk := jose.JSONWebKey{Key: &k.Key.PublicKey, KeyID: k.KID, Algorithm: string(jose.ES256), Use: "sig", Certificates: k.Chain}
	if len(k.Chain) > 0 {
		s1 := sha1.Sum(k.Chain[0].Raw)
		s256 := sha256.Sum256(k.Chain[0].Raw)
		jwk.CertificateThumbprintSHA1, jwk.CertificateThumbprintSHA256 = s1[:], s256[:]
	}
	return jose.JSONWebKeySet{Keys: []jose.JSONWebKey{jwk}}
}

// RecPayload is the payload of a Pix Automático authorization's location (the API Pix's
// recurrence, /rec): who is charged, for what, how often, and its status.
type RecPayload struct {
	IDRec      string        `json:"idRec"`
	Vinculo    RecVinculo    `json:"vinculo"`
	Calendario RecCalendario `json:"calendario"`
	Valor      RecValor      `json:"valor"`
	Politica   string        `json:"politicaRetentativa"`
	Status     string        `json:"status"`
}

// RecVinculo is what the recurrence is for and who pays it.
type RecVinculo struct {
	Objeto   string   `json:"objeto,omitempty"`
	Contrato string   `json:"contrato"`
	Devedor  *Devedor `json:"devedor,omitempty"`
}

// RecCalendario is the recurrence's first date, optional last date and period.
type RecCalendario struct {
	DataInicial   string `json:"dataInicial"`
	DataFinal     string `json:"dataFinal,omitempty"`
	Periodicidade string `json:"periodicidade"`
}

// RecValor carries the most one charge may take, as the receiver set it.
type RecValor struct {
	ValorMaximo string `json:"valorMaximo"`
}

// Sign returns the compact JWS (ES256) of p (a LocationPayload or a RecPayload) whose protected
// header names jku (the https URL of the JWKS) and the key id.
func (k *SigningKey) Sign(p any, jku string) (string, error) {
	body, err := json.Marshal(p)
	if err != nil {
		return "", err
	}
	opts := (&jose.SignerOptions{}).WithType("JOSE").WithHeader("jku", jku).WithHeader(jose.HeaderKey("kid"), k.KID)
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: k.Key}, opts)
	if err != nil {
		return "", err
	}
	obj, err := signer.Sign(body)
	if err != nil {
		return "", err
	}
	return obj.CompactSerialize()
}
