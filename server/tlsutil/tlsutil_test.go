package tlsutil

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/matryer/is"
)

func TestEnsureLocalGeneratesOnceAndVerifies(t *testing.T) {
	is := is.New(t)
	dir := t.TempDir()
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	lc, err := EnsureLocal(dir, now)
	is.NoErr(err)
	is.True(lc.Created) // first start generates the CA and the leaf
	again, err := EnsureLocal(dir, now.Add(time.Hour))
	is.NoErr(err)
	is.True(!again.Created) // later starts reuse them (the printed CA stays valid for curl)

	caPEM, err := os.ReadFile(lc.CAPath)
	is.NoErr(err)
	roots := x509.NewCertPool()
	is.True(roots.AppendCertsFromPEM(caPEM))
	cert, err := tls.LoadX509KeyPair(lc.CertPath, lc.KeyPath)
	is.NoErr(err)
	leaf, err := x509.ParseCertificate(cert.Certificate[0])
	is.NoErr(err)
	for _, host := range []string{"localhost", "127.0.0.1", "::1"} {
		_, err := leaf.Verify(x509.VerifyOptions{DNSName: host, Roots: roots, CurrentTime: now})
		is.NoErr(err) // the leaf is valid for every local name, signed by the printed CA
	}
	st, err := os.Stat(lc.KeyPath)
	is.NoErr(err)
	is.Equal(st.Mode().Perm(), os.FileMode(0o600)) // private keys are readable by the owner only
}

func TestEnsureLocalRenewsAnExpiringLeaf(t *testing.T) {
	is := is.New(t)
	dir := t.TempDir()
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	_, err := EnsureLocal(dir, now)
	is.NoErr(err)
	later, err := EnsureLocal(dir, now.AddDate(3, 0, 0))
	is.NoErr(err)
	is.True(later.Created) // a leaf past its validity is replaced on start
}

func TestLoadRequiresBothFiles(t *testing.T) {
	is := is.New(t)
	_, err := Load("cert.pem", "")
	is.True(err != nil) // --tls-cert without --tls-key is refused
}

// TestIssueSigningCert: the local CA certifies a signing key for the given hosts (digital
// signature only); the chain verifies against the CA for each host; without a CA there is none.
func TestIssueSigningCert(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := IssueSigningCert(dir, &key.PublicKey, []string{"localhost"}, now); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("without a local CA: %v, want os.ErrNotExist", err)
	}
	if _, err := EnsureLocal(dir, now); err != nil {
		t.Fatal(err)
	}
	chain, err := IssueSigningCert(dir, &key.PublicKey, []string{"localhost", "127.0.0.1", "pix.loja.example"}, now)
	if err != nil {
		t.Fatal(err)
	}
	if len(chain) != 2 || !key.PublicKey.Equal(chain[0].PublicKey) || chain[0].KeyUsage != x509.KeyUsageDigitalSignature || chain[0].IsCA {
		t.Fatalf("chain: %d certificates, leaf usage %v", len(chain), chain[0].KeyUsage)
	}
	roots := x509.NewCertPool()
	roots.AddCert(chain[1])
	for _, h := range []string{"localhost", "127.0.0.1", "pix.loja.example"} {
		if _, err := chain[0].Verify(x509.VerifyOptions{Roots: roots, DNSName: h, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}}); err != nil {
			t.Errorf("verify for %s: %v", h, err)
		}
	}
	if _, err := chain[0].Verify(x509.VerifyOptions{Roots: roots, DNSName: "other.example", KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}}); err == nil {
		t.Error("the certificate verified for a host it does not name")
	}
}
