// Package tlsutil provides troco's certificates: a local CA and a localhost leaf generated once
// into the data directory, PEM files given by the operator, or ACME through autocert.
package tlsutil

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// Local certificate file names inside the data directory.
const (
	CAFile   = "ca.pem"
	CAKey    = "ca-key.pem"
	CertFile = "localhost.pem"
	KeyFile  = "localhost-key.pem"
)

// LocalCert is a generated development certificate.
type LocalCert struct {
	CAPath   string
	CertPath string
	KeyPath  string
	Created  bool
}

// EnsureLocal returns the local CA and localhost leaf in dir, generating them on first use.
// The leaf covers localhost, 127.0.0.1 and ::1 plus any extra host names given.
func EnsureLocal(dir string, now time.Time, extraHosts ...string) (LocalCert, error) {
	lc := LocalCert{CAPath: filepath.Join(dir, CAFile), CertPath: filepath.Join(dir, CertFile), KeyPath: filepath.Join(dir, KeyFile)}
	if fileExists(lc.CAPath) && fileExists(lc.CertPath) && fileExists(lc.KeyPath) {
		if c, err := tls.LoadX509KeyPair(lc.CertPath, lc.KeyPath); err == nil && c.Leaf != nil && now.Before(c.Leaf.NotAfter.Add(-24*time.Hour)) {
			return lc, nil
		}
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return lc, fmt.Errorf("tls: create data dir: %w", err)
	}
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return lc, err
	}
	caTmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "troco local development CA", Organization: []string{"troco"}},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.AddDate(10, 0, 0),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return lc, fmt.Errorf("tls: create CA: %w", err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	leafKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return lc, err
	}
	leafTmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: "localhost", Organization: []string{"troco"}},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.AddDate(2, 0, 0),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("::1")},
	}
	for _, h := range extraHosts {
		if ip := net.ParseIP(h); ip != nil {
			leafTmpl.IPAddresses = append(leafTmpl.IPAddresses, ip)
		} else if h != "" && h != "localhost" {
			leafTmpl.DNSNames = append(leafTmpl.DNSNames, h)
		}
	}
	leafDER, err := x509.CreateCertificate(rand.Reader, leafTmpl, ca, &leafKey.PublicKey, caKey)
	if err != nil {
		return lc, fmt.Errorf("tls: create leaf: %w", err)
	}
	caKeyDER, _ := x509.MarshalECPrivateKey(caKey)
	leafKeyDER, _ := x509.MarshalECPrivateKey(leafKey)
	for _, f := range []struct {
		path, typ string
		der       []byte
		mode      os.FileMode
	}{
		{lc.CAPath, "CERTIFICATE", caDER, 0o600},
		{filepath.Join(dir, CAKey), "EC PRIVATE KEY", caKeyDER, 0o600},
		{lc.CertPath, "CERTIFICATE", append(pemBytes("CERTIFICATE", leafDER), pemBytes("CERTIFICATE", caDER)...), 0o600},
		{lc.KeyPath, "EC PRIVATE KEY", leafKeyDER, 0o600},
	} {
		data := f.der
		if f.path != lc.CertPath {
			data = pemBytes(f.typ, f.der)
		}
		if err := writeAtomic(f.path, data, f.mode); err != nil {
			return lc, err
		}
	}
	lc.Created = true
	return lc, nil
}

func pemBytes(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}

func writeAtomic(path string, data []byte, mode os.FileMode) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, mode); err != nil {
		return fmt.Errorf("tls: write %s: %w", path, err)
	}
	return os.Rename(tmp, path)
}

func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 126))
	return n
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// ServerConfig returns a TLS configuration for a server: TLS 1.2+, modern ciphers, h2.
func ServerConfig(cert tls.Certificate) *tls.Config {
	return &tls.Config{
		MinVersion:   tls.VersionTLS12,
		Certificates: []tls.Certificate{cert},
		NextProtos:   []string{"h2", "http/1.1"},
	}
}

// Load reads a PEM certificate chain and key.
func Load(certPath, keyPath string) (tls.Certificate, error) {
	if certPath == "" || keyPath == "" {
		return tls.Certificate{}, errors.New("tls: both --tls-cert and --tls-key are required")
	}
	c, err := tls.LoadX509KeyPair(certPath, keyPath)
	if err != nil {
		return c, fmt.Errorf("tls: load certificate: %w", err)
	}
	return c, nil
}

// IssueSigningCert issues, with the local CA in dir (made by EnsureLocal), a certificate for a
// signing key (digital signature only) naming hosts, valid two years from now, and returns the
// chain [leaf, CA]. Without a local CA in dir it returns os.ErrNotExist.
func IssueSigningCert(dir string, pub crypto.PublicKey, hosts []string, now time.Time) ([]*x509.Certificate, error) {
	caPEM, err := os.ReadFile(filepath.Join(dir, CAFile))
	if err != nil {
		return nil, err
	}
	keyPEM, err := os.ReadFile(filepath.Join(dir, CAKey))
	if err != nil {
		return nil, err
	}
	cb, _ := pem.Decode(caPEM)
	kb, _ := pem.Decode(keyPEM)
	if cb == nil || kb == nil {
		return nil, errors.New("tls: the local CA files are not PEM")
	}
	ca, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		return nil, err
	}
	caKey, err := x509.ParseECPrivateKey(kb.Bytes)
	if err != nil {
		return nil, err
	}
	leaf, err := signingCert(pub, hosts, now, ca, caKey)
	if err != nil {
		return nil, err
	}
	return []*x509.Certificate{leaf, ca}, nil
}

// SelfIssuedSigningCert is a certificate of a signing key issued by the key itself (its own
// root), naming hosts: the chain of a deployment without troco's local CA.
func SelfIssuedSigningCert(key crypto.Signer, hosts []string, now time.Time) ([]*x509.Certificate, error) {
	leaf, err := signingCert(key.Public(), hosts, now, nil, key)
	if err != nil {
		return nil, err
	}
	return []*x509.Certificate{leaf}, nil
}

func signingCert(pub crypto.PublicKey, hosts []string, now time.Time, parent *x509.Certificate, signer crypto.Signer) (*x509.Certificate, error) {
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: "troco PIX location signing key", Organization: []string{"troco"}},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.AddDate(2, 0, 0),
		KeyUsage:     x509.KeyUsageDigitalSignature,
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else if h != "" {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	if parent == nil {
		parent = tmpl
		tmpl.BasicConstraintsValid = true // its own root
		tmpl.KeyUsage |= x509.KeyUsageCertSign
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, pub, signer)
	if err != nil {
		return nil, fmt.Errorf("tls: issue signing certificate: %w", err)
	}
	return x509.ParseCertificate(der)
}
