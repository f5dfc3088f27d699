// Package secrets holds troco's master key, kept in the data directory, and the keys derived
// from it: AES-256-GCM sealing for secrets that must be recoverable (webhook signing secrets)
// and HMAC keys for fingerprints (cards). Nothing secret is ever stored in clear in the database.
package secrets

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// MasterKeyFile is the master key's file name inside the data directory.
const MasterKeyFile = "master.key"

// Keyring derives purpose-specific keys from one 32-byte master key.
type Keyring struct {
	master []byte
	aead   cipher.AEAD
}

// New returns a keyring for a 32-byte master key.
func New(master []byte) (*Keyring, error) {
	if len(master) != 32 {
		return nil, errors.New("secrets: master key must be 32 bytes")
	}
	encKey, err := hkdf.Key(sha256.New, master, nil, "troco seal v1", 32)
	if err != nil {
		return nil, err
	}
	block, err := aes.NewCipher(encKey)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &Keyring{master: master, aead: aead}, nil
}

// Random returns a keyring with a fresh random master key (tests, :memory: instances).
func Random() *Keyring {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("secrets: crypto/rand failed: " + err.Error())
	}
	k, _ := New(b[:])
	return k
}

// LoadOrCreate reads dir/master.key, creating it (mode 0600) on first use.
func LoadOrCreate(dir string) (*Keyring, error) {
	path := filepath.Join(dir, MasterKeyFile)
	raw, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("secrets: create data dir: %w", err)
		}
		var b [32]byte
		if _, err := rand.Read(b[:]); err != nil {
			return nil, err
		}
		enc := base64.StdEncoding.EncodeToString(b[:]) + "\n"
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, os.ErrExist) {
			return LoadOrCreate(dir) // another process created it first
		}
		if err != nil {
			return nil, fmt.Errorf("secrets: create master key: %w", err)
		}
		if _, err := f.WriteString(enc); err != nil {
			f.Close()
			return nil, err
		}
		if err := f.Sync(); err != nil {
			f.Close()
			return nil, err
		}
		if err := f.Close(); err != nil {
			return nil, err
		}
		return New(b[:])
	}
	if err != nil {
		return nil, fmt.Errorf("secrets: read master key: %w", err)
	}
	master, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(raw)))
	if err != nil {
		return nil, fmt.Errorf("secrets: %s is not a base64 key: %w", path, err)
	}
	return New(master)
}

// Seal encrypts plaintext; the result is printable and safe to store.
func (k *Keyring) Seal(plaintext string) string {
	nonce := make([]byte, k.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		panic("secrets: crypto/rand failed: " + err.Error())
	}
	out := k.aead.Seal(nonce, nonce, []byte(plaintext), nil)
	return "v1:" + base64.RawStdEncoding.EncodeToString(out)
}

// Open decrypts a value made by Seal.
func (k *Keyring) Open(sealed string) (string, error) {
	rest, ok := strings.CutPrefix(sealed, "v1:")
	if !ok {
		return "", errors.New("secrets: unknown sealed format")
	}
	raw, err := base64.RawStdEncoding.DecodeString(rest)
	if err != nil || len(raw) < k.aead.NonceSize() {
		return "", errors.New("secrets: corrupt sealed value")
	}
	pt, err := k.aead.Open(nil, raw[:k.aead.NonceSize()], raw[k.aead.NonceSize():], nil)
	if err != nil {
		return "", errors.New("secrets: sealed value does not open with this master key")
	}
	return string(pt), nil
}

// DeriveKey returns a 32-byte key for a named purpose (e.g. "card fingerprint").
func (k *Keyring) DeriveKey(purpose string) []byte {
	out, err := hkdf.Key(sha256.New, k.master, nil, "troco "+purpose, 32)
	if err != nil {
		panic("secrets: hkdf: " + err.Error())
	}
	return out
}
