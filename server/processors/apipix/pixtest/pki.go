package pixtest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// PKI is a throwaway certificate authority with the certificates a live PIX setup needs: the
// PSP's server certificate, troco's client certificate (mTLS to the PSP) and the PSP's client
// certificate (its webhook calls to troco). One CA issues them all here; in production they
// come from the PSP and from an ICP-Brasil authority.
type PKI struct {
	CA     *x509.Certificate
	caKey  *ecdsa.PrivateKey
	CAPEM  []byte
	Server tls.Certificate // the PSP's HTTPS server (127.0.0.1, localhost)
	Client tls.Certificate // troco's client certificate
	PSP    tls.Certificate // the PSP's client certificate for webhooks
}

// NewPKI generates a CA and its three leaves.
func NewPKI() (*PKI, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{SerialNumber: serial(), Subject: pkix.Name{CommonName: "troco dev psp CA"}, NotBefore: now.Add(-time.Hour),
		NotAfter: now.AddDate(1, 0, 0), KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true, IsCA: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	ca, _ := x509.ParseCertificate(der)
	p := &PKI{CA: ca, caKey: key, CAPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
	if p.Server, err = p.Leaf("psp.localhost", x509.ExtKeyUsageServerAuth); err != nil {
		return nil, err
	}
	if p.Client, err = p.Leaf("troco merchant", x509.ExtKeyUsageClientAuth); err != nil {
		return nil, err
	}
	if p.PSP, err = p.Leaf("psp webhook", x509.ExtKeyUsageClientAuth); err != nil {
		return nil, err
	}
	return p, nil
}

// Leaf issues a certificate for name with one extended key usage.
func (p *PKI) Leaf(name string, usage x509.ExtKeyUsage) (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{SerialNumber: serial(), Subject: pkix.Name{CommonName: name}, NotBefore: now.Add(-time.Hour), NotAfter: now.AddDate(1, 0, 0),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage},
		DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("::1")}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.CA, &key.PublicKey, p.caKey)
	if err != nil {
		return tls.Certificate{}, err
	}
	leaf, _ := x509.ParseCertificate(der)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, nil
}

// Pool returns a pool holding the CA.
func (p *PKI) Pool() *x509.CertPool {
	pool := x509.NewCertPool()
	pool.AddCert(p.CA)
	return pool
}

// WriteFiles writes ca.pem, client.pem and client-key.pem (troco's mTLS pair) into dir and
// returns their paths.
func (p *PKI) WriteFiles(dir string) (ca, cert, key string, err error) {
	ca, cert, key = filepath.Join(dir, "psp-ca.pem"), filepath.Join(dir, "pix-client.pem"), filepath.Join(dir, "pix-client-key.pem")
	kder, err := x509.MarshalECPrivateKey(p.Client.PrivateKey.(*ecdsa.PrivateKey))
	if err != nil {
		return
	}
	for _, f := range []struct {
		path string
		data []byte
	}{
		{ca, p.CAPEM},
		{cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: p.Client.Certificate[0]})},
		{key, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder})},
	} {
		if err = os.WriteFile(f.path, f.data, 0o600); err != nil {
			return
		}
	}
	return
}

func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	return n
}
