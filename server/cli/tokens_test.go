package cli

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/matryer/is"

	"troco/db"
	"troco/server/secrets"
)

func TestTokensRotateKey(t *testing.T) {
	is := is.New(t)
	path, _ := cliDB(t)
	dir := filepath.Dir(path)
	var out bytes.Buffer
	// Without serve's master key nothing is created.
	is.True(Run(context.Background(), testCLIEnv(t, &out, "tokens", "rotate-key", "--data-dir", dir)) != nil)
	_, err := secrets.LoadOrCreate(dir)
	is.NoErr(err)
	is.NoErr(Run(context.Background(), testCLIEnv(t, &out, "tokens", "rotate-key", "--data-dir", dir)))
	is.True(strings.Contains(out.String(), "new signing key"))
	out.Reset()
	is.NoErr(Run(context.Background(), testCLIEnv(t, &out, "tokens", "rotate-key", "--data-dir", dir)))

	d, err := openAdmin(context.Background(), testCLIEnv(t, &out), path)
	is.NoErr(err)
	defer d.Close()
	is.NoErr(d.Read(context.Background(), func(tx *db.Tx) error {
		keys, err := tx.SigningKeys(0)
		is.NoErr(err)
		is.Equal(len(keys), 2)            // the new key and the previous one, still published
		is.True(keys[0].RetiredAt == nil) // the newest signs
		is.True(keys[1].RetiredAt != nil)
		is.True(strings.HasPrefix(keys[0].PrivateSealed, "v1:")) // sealed, never in clear
		return nil
	}))
	is.True(Run(context.Background(), testCLIEnv(t, &out, "tokens", "rotate-key", "extra")) != nil)
}
