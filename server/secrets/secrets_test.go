package secrets

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/matryer/is"
)

func TestSealOpen(t *testing.T) {
	is := is.New(t)
	k := Random()
	s := k.Seal("whsec_abc")
	is.True(!strings.Contains(s, "whsec_abc")) // sealed value hides the secret
	pt, err := k.Open(s)
	is.NoErr(err)
	is.Equal(pt, "whsec_abc")
	_, err = Random().Open(s)
	is.True(err != nil) // another master key cannot open it
}

func TestLoadOrCreateIsStable(t *testing.T) {
	is := is.New(t)
	dir := t.TempDir()
	a, err := LoadOrCreate(dir)
	is.NoErr(err)
	b, err := LoadOrCreate(dir)
	is.NoErr(err)
	is.True(bytes.Equal(a.DeriveKey("x"), b.DeriveKey("x")))  // same key across restarts
	is.True(!bytes.Equal(a.DeriveKey("x"), a.DeriveKey("y"))) // purposes are separated
	st, err := os.Stat(filepath.Join(dir, MasterKeyFile))
	is.NoErr(err)
	is.Equal(st.Mode().Perm(), os.FileMode(0o600)) // only the owner reads the master key
}
