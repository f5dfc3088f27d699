package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"troco/db"
	"troco/server/secrets"
	"troco/server/tokens"
)

// tokensRotateKey makes a new signing key for /api/v1 access tokens. Tokens signed by the
// previous key stay valid until they expire (one hour); new tokens carry the new kid.
func tokensRotateKey(ctx context.Context, env Env, args []string) error {
	fs := newFlags(env, "tokens rotate-key")
	dataDir := fs.str("data-dir", "./troco-data", "serve's data directory (holds the master key)")
	dbPath := fs.str("db", "", "SQLite file (default <data-dir>/troco.db)")
	pos, err := fs.parse(args)
	if err != nil {
		return err
	}
	if len(pos) != 0 {
		return errors.New("usage: troco tokens rotate-key [--data-dir D] [--db F]")
	}
	if *dbPath == "" {
		*dbPath = filepath.Join(*dataDir, "troco.db")
	}
	// The key is sealed with the master key serve uses: it must exist and match the database.
	if _, err := os.Stat(filepath.Join(*dataDir, secrets.MasterKeyFile)); err != nil {
		return fmt.Errorf("no %s in %s: point --data-dir at serve's data directory", secrets.MasterKeyFile, *dataDir)
	}
	keyring, err := secrets.LoadOrCreate(*dataDir)
	if err != nil {
		return err
	}
	d, err := openAdmin(ctx, env, *dbPath)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Write(ctx, func(tx *db.Tx) error { return checkMasterKey(tx, keyring, *dataDir) }); err != nil {
		return err
	}
	kid, err := tokens.Rotate(ctx, d, keyring)
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "new signing key %s; tokens of the previous key stay valid until they expire (%s)\n", kid, tokens.Lifetime)
	return nil
}
