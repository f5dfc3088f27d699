package cli

import (
	"archive/tar"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"troco/db"
	"troco/server/clock"
	"troco/server/secrets"
)

// A backup is a tar archive, in this order: manifest.json (what and when, the database's size
// and SHA-256, the number of files), master.key (the data dir's key, without which the stored
// webhook secrets cannot be opened), troco.db (a snapshot by SQLite's online backup API) and
// files/<id> for each uploaded file. It is written mode 0600 and holds the master key: keep it
// as carefully as the data dir.
const (
	backupManifest = "manifest.json"
	backupDB       = "troco.db"
	backupFormat   = "troco-backup-1"
)

type manifest struct {
	Format        string `json:"format"`
	CreatedAt     string `json:"created_at"`
	SchemaVersion int    `json:"schema_version"`
	DBBytes       int64  `json:"db_bytes"`
	DBSHA256      string `json:"db_sha256"`
	Payments      int64  `json:"payment_intents"`
	// Files counts the uploaded files that follow the database as files/<id> members.
	Files int `json:"files"`
}

// filesSubdir is where serve keeps the bytes of uploaded files, inside the data dir.
const filesSubdir = "files"

// uploadedFiles lists the committed uploads of the data dir (file_… names; temporary uploads
// are left out, as serve's start-up sweep would remove them).
func uploadedFiles(dataDir string) ([]string, error) {
	entries, err := os.ReadDir(filepath.Join(dataDir, filesSubdir))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("backup: read the files directory: %w", err)
	}
	var names []string
	for _, e := range entries {
		if e.Type().IsRegular() && strings.HasPrefix(e.Name(), "file_") {
			names = append(names, e.Name())
		}
	}
	return names, nil
}

var errLocked = errors.New("locked")

// writeBackup snapshots the database with snap (into a temporary file) and writes the archive to
// dst atomically (dst.tmp, fsync, rename); it returns the manifest written.
func writeBackup(ctx context.Context, dst, dataDir string, now time.Time, snap func(string) error) (*manifest, error) {
	keyring, keyRaw, err := readMasterKey(dataDir)
	if err != nil {
		return nil, err
	}
	tmpDir, err := os.MkdirTemp(filepath.Dir(dst), ".troco-backup-")
	if err != nil {
		return nil, fmt.Errorf("backup: %w", err)
	}
	defer os.RemoveAll(tmpDir)
	snapPath := filepath.Join(tmpDir, backupDB)
	if err := snap(snapPath); err != nil {
		return nil, err
	}
	info, err := db.CheckFile(ctx, snapPath, masterKeyCheckSetting)
	if err != nil {
		return nil, fmt.Errorf("backup: the snapshot does not check out: %w", err)
	}
	if sealed, ok := info.Settings[masterKeyCheckSetting]; ok {
		if _, err := keyring.Open(sealed); err != nil {
			return nil, fmt.Errorf("backup: %s in %s is not the master key this database was served with; refusing to write a backup that could not be restored", secrets.MasterKeyFile, dataDir)
		}
	}
	sum, size, err := hashFile(snapPath)
	if err != nil {
		return nil, err
	}
	// Uploads are written (and synced) before their row commits, so every file the snapshot
	// names is on disk now; files uploaded since are included too and are harmless (a restore's
	// start-up sweep removes bytes without a row).
	uploads, err := uploadedFiles(dataDir)
	if err != nil {
		return nil, err
	}
	m := &manifest{Format: backupFormat, CreatedAt: now.UTC().Format(time.RFC3339), SchemaVersion: info.SchemaVersion,
		DBBytes: size, DBSHA256: sum, Payments: info.Payments, Files: len(uploads)}
	mj, _ := json.MarshalIndent(m, "", "  ")

	tmp := dst + ".tmp"
	out, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("backup: %w", err)
	}
	fail := func(err error) (*manifest, error) {
		out.Close()
		os.Remove(tmp)
		return nil, fmt.Errorf("backup: write %s: %w", dst, err)
	}
	tw := tar.NewWriter(out)
	mod := now.UTC()
	for _, member := range []struct {
		name string
		data []byte
	}{{backupManifest, append(mj, '\n')}, {secrets.MasterKeyFile, keyRaw}} {
		if err := tw.WriteHeader(&tar.Header{Name: member.name, Mode: 0o600, Size: int64(len(member.data)), ModTime: mod, Typeflag: tar.TypeReg}); err != nil {
			return fail(err)
		}
		if _, err := tw.Write(member.data); err != nil {
			return fail(err)
		}
	}
	if err := tw.WriteHeader(&tar.Header{Name: backupDB, Mode: 0o600, Size: size, ModTime: mod, Typeflag: tar.TypeReg}); err != nil {
		return fail(err)
	}
	f, err := os.Open(snapPath)
	if err != nil {
		return fail(err)
	}
	_, err = io.Copy(tw, f)
	f.Close()
	if err != nil {
		return fail(err)
	}
	for _, name := range uploads {
		if err := addFile(tw, filepath.Join(dataDir, filesSubdir, name), filesSubdir+"/"+name, mod); err != nil {
			return fail(err)
		}
	}
	if err := tw.Close(); err != nil {
		return fail(err)
	}
	if err := out.Sync(); err != nil {
		return fail(err)
	}
	if err := out.Close(); err != nil {
		os.Remove(tmp)
		return nil, fmt.Errorf("backup: write %s: %w", dst, err)
	}
	if err := os.Rename(tmp, dst); err != nil {
		os.Remove(tmp)
		return nil, fmt.Errorf("backup: %w", err)
	}
	syncDir(filepath.Dir(dst))
	return m, nil
}

func addFile(tw *tar.Writer, path, name string, mod time.Time) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o600, Size: st.Size(), ModTime: mod, Typeflag: tar.TypeReg}); err != nil {
		return err
	}
	_, err = io.Copy(tw, f)
	return err
}

func readMasterKey(dataDir string) (*secrets.Keyring, []byte, error) {
	path := filepath.Join(dataDir, secrets.MasterKeyFile)
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("read the master key: %w (a backup needs the data dir's %s; give --data-dir)", err, secrets.MasterKeyFile)
	}
	k, err := parseMasterKey(raw)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	return k, raw, nil
}

func parseMasterKey(raw []byte) (*secrets.Keyring, error) {
	b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(raw)))
	if err != nil {
		return nil, errors.New("not a base64 master key")
	}
	return secrets.New(b)
}

func hashFile(path string) (string, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return "", 0, err
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}

func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
}

// backupCmd is `troco backup --to FILE`: a consistent online backup, also while serve runs.
func backupCmd(ctx context.Context, env Env, args []string) error {
	fs := newFlags(env, "backup")
	to := fs.String("to", "", "the backup file to write (required; it must not exist)")
	dataDir := fs.str("data-dir", "./troco-data", "serve's data directory (holds master.key)")
	dbPath := fs.str("db", "", "SQLite file (default <data-dir>/troco.db)")
	if pos, err := fs.parse(args); err != nil {
		return err
	} else if len(pos) > 0 {
		return fmt.Errorf("backup takes no arguments; got %q", pos)
	}
	if *to == "" {
		return errors.New("--to FILE is required")
	}
	if *dbPath == "" {
		*dbPath = filepath.Join(*dataDir, "troco.db")
	}
	if db.IsPostgres(*dbPath) {
		return errors.New("troco backup copies a SQLite database; on PostgreSQL use pg_dump (and keep <data-dir>/master.key and the uploaded files)")
	}
	if *dbPath == ":memory:" {
		return errors.New("an in-memory database cannot be backed up from another process")
	}
	if _, err := os.Stat(*to); err == nil {
		return fmt.Errorf("%s already exists; choose a new file name", *to)
	}
	start := clock.Real{}.Now()
	m, err := writeBackup(ctx, *to, *dataDir, start, func(snap string) error { return db.BackupFile(ctx, *dbPath, snap) })
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "backup written to %s (database %d bytes, schema %d, %d payment intents, %d uploaded files) in %s\n", *to, m.DBBytes, m.SchemaVersion, m.Payments, m.Files, clock.Real{}.Now().Sub(start).Round(time.Millisecond))
	fmt.Fprintf(env.Stdout, "it holds the master key: keep it mode 0600, off this machine and encrypted at rest\n")
	return nil
}

// restoreCmd is `troco restore --from FILE`: checks the backup completely, then puts its
// database and master key in place of the data dir's, while no serve runs on it.
func restoreCmd(ctx context.Context, env Env, args []string) error {
	fs := newFlags(env, "restore")
	from := fs.String("from", "", "the backup file (required)")
	dataDir := fs.str("data-dir", "./troco-data", "the data directory to restore into")
	dbPath := fs.str("db", "", "SQLite file to restore (default <data-dir>/troco.db)")
	force := fs.Bool("force", false, "replace an existing database and master key (they are kept aside as *.before-restore-<time>)")
	if pos, err := fs.parse(args); err != nil {
		return err
	} else if len(pos) > 0 {
		return fmt.Errorf("restore takes no arguments; got %q", pos)
	}
	if *from == "" {
		return errors.New("--from FILE is required")
	}
	if *dbPath == "" {
		*dbPath = filepath.Join(*dataDir, "troco.db")
	}
	if db.IsPostgres(*dbPath) {
		return errors.New("troco restore writes a SQLite database; to move a SQLite database to PostgreSQL use troco export and troco import")
	}
	if *dbPath == ":memory:" {
		return errors.New("restore needs a database file, not :memory:")
	}
	if err := os.MkdirAll(*dataDir, 0o700); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(*dbPath), 0o700); err != nil {
		return err
	}
	release, err := lockDB(*dbPath)
	if errors.Is(err, errLocked) {
		return fmt.Errorf("refusing to restore: %s is in use by a running troco serve (it holds %s.lock); stop it first", *dbPath, *dbPath)
	}
	if err != nil {
		return err
	}
	defer release()

	work, err := os.MkdirTemp(filepath.Dir(*dbPath), ".troco-restore-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	m, keyRaw, err := unpackBackup(*from, work)
	if err != nil {
		return fmt.Errorf("refusing to restore %s: %w", *from, err)
	}
	snap := filepath.Join(work, backupDB)
	info, err := db.CheckFile(ctx, snap, masterKeyCheckSetting)
	if err != nil {
		return fmt.Errorf("refusing to restore %s: its database %w", *from, err)
	}
	if want, err := db.SchemaVersion(env.Schema); err == nil && info.SchemaVersion > want {
		return fmt.Errorf("refusing to restore %s: its schema version %d is newer than this binary's %d; restore with the troco version that wrote it", *from, info.SchemaVersion, want)
	}
	keyring, err := parseMasterKey(keyRaw)
	if err != nil {
		return fmt.Errorf("refusing to restore %s: its %s is damaged: %w", *from, secrets.MasterKeyFile, err)
	}
	if sealed, ok := info.Settings[masterKeyCheckSetting]; ok {
		if _, err := keyring.Open(sealed); err != nil {
			return fmt.Errorf("refusing to restore %s: its master key does not match its database (the stored webhook secrets would not open)", *from)
		}
	}

	keyPath := filepath.Join(*dataDir, secrets.MasterKeyFile)
	var existing []string
	for _, p := range []string{*dbPath, keyPath} {
		if st, err := os.Stat(p); err == nil && st.Size() > 0 {
			existing = append(existing, p)
		}
	}
	if cur, err := os.ReadFile(keyPath); err == nil && len(existing) > 0 && !*force {
		if strings.TrimSpace(string(cur)) != strings.TrimSpace(string(keyRaw)) {
			return fmt.Errorf("refusing to restore: %s holds a different master key than the backup; restore into an empty data dir, or add --force to replace the database and the key (the old ones are kept aside)", keyPath)
		}
	}
	if len(existing) > 0 && !*force {
		return fmt.Errorf("refusing to restore: %s already exists; restore into an empty data dir, or add --force to replace it (the old files are kept aside)", strings.Join(existing, " and "))
	}
	stamp := clock.Real{}.Now().UTC().Format("20060102T150405Z")
	var keptAside []string
	filesPath := filepath.Join(*dataDir, filesSubdir)
	for _, p := range []string{*dbPath, *dbPath + "-wal", *dbPath + "-shm", keyPath, filesPath} {
		if _, err := os.Stat(p); err == nil {
			aside := p + ".before-restore-" + stamp
			if err := os.Rename(p, aside); err != nil {
				return fmt.Errorf("restore: keep %s aside: %w", p, err)
			}
			keptAside = append(keptAside, aside)
		}
	}
	if err := os.WriteFile(filepath.Join(work, secrets.MasterKeyFile), keyRaw, 0o600); err != nil {
		return err
	}
	if err := os.Rename(filepath.Join(work, secrets.MasterKeyFile), keyPath); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	if err := os.Chmod(snap, 0o600); err != nil {
		return err
	}
	if err := os.Rename(filepath.Join(work, filesSubdir), filesPath); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	if err := os.Rename(snap, *dbPath); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	syncDir(*dataDir)
	syncDir(filepath.Dir(*dbPath))
	fmt.Fprintf(env.Stdout, "restored %s (taken %s, schema %d, %d payment intents, %d uploaded files) into %s; integrity check ok\n", *from, m.CreatedAt, info.SchemaVersion, info.Payments, m.Files, *dbPath)
	for _, p := range keptAside {
		fmt.Fprintf(env.Stdout, "kept aside: %s\n", p)
	}
	return nil
}

// unpackBackup extracts a backup into dir (troco.db) after checking its manifest, its members
// and the database's size and SHA-256; it returns the manifest and the master key's bytes.
func unpackBackup(path, dir string) (*manifest, []byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	damaged := func(err error) (*manifest, []byte, error) {
		if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
			return nil, nil, errors.New("the file is truncated (it ends in the middle of the backup); use a complete copy")
		}
		return nil, nil, fmt.Errorf("the file is not a troco backup or is damaged: %w", err)
	}
	tr := tar.NewReader(f)
	var m *manifest
	var key []byte
	for i, want := range []string{backupManifest, secrets.MasterKeyFile, backupDB} {
		h, err := tr.Next()
		if err != nil {
			if i == 0 && errors.Is(err, io.EOF) {
				return nil, nil, errors.New("the file is empty or not a troco backup")
			}
			return damaged(err)
		}
		if h.Name != want || h.Typeflag != tar.TypeReg {
			return nil, nil, fmt.Errorf("the file is not a troco backup (member %q where %q was expected)", h.Name, want)
		}
		switch want {
		case backupManifest, secrets.MasterKeyFile:
			if h.Size > 1<<16 {
				return nil, nil, fmt.Errorf("the file is not a troco backup (%s is too large)", want)
			}
			b, err := io.ReadAll(tr)
			if err != nil {
				return damaged(err)
			}
			if want == secrets.MasterKeyFile {
				key = b
				continue
			}
			m = &manifest{}
			if err := json.Unmarshal(b, m); err != nil || m.Format != backupFormat {
				return nil, nil, errors.New("the file is not a troco backup (unknown manifest)")
			}
		case backupDB:
			out, err := os.OpenFile(filepath.Join(dir, backupDB), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
			if err != nil {
				return nil, nil, err
			}
			h256 := sha256.New()
			n, err := io.Copy(io.MultiWriter(out, h256), tr)
			if err == nil {
				err = out.Sync()
			}
			out.Close()
			if err != nil {
				return damaged(err)
			}
			if n != m.DBBytes || hex.EncodeToString(h256.Sum(nil)) != m.DBSHA256 {
				return nil, nil, fmt.Errorf("the file is damaged: its database is %d bytes with another checksum than the %d bytes the manifest records", n, m.DBBytes)
			}
		}
	}
	// The uploaded files, as many as the manifest counts.
	if err := os.Mkdir(filepath.Join(dir, filesSubdir), 0o700); err != nil {
		return nil, nil, err
	}
	for range m.Files {
		h, err := tr.Next()
		if err != nil {
			return damaged(err)
		}
		name, ok := strings.CutPrefix(h.Name, filesSubdir+"/")
		if !ok || h.Typeflag != tar.TypeReg || !strings.HasPrefix(name, "file_") || strings.ContainsAny(name, `/\`) || name == "" {
			return nil, nil, fmt.Errorf("the file is not a troco backup (unexpected member %q)", h.Name)
		}
		out, err := os.OpenFile(filepath.Join(dir, filesSubdir, name), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return nil, nil, err
		}
		n, err := io.Copy(out, tr)
		if err == nil {
			err = out.Sync()
		}
		out.Close()
		if err != nil {
			return damaged(err)
		}
		if n != h.Size {
			return nil, nil, errors.New("the file is truncated (it ends in the middle of the backup); use a complete copy")
		}
	}
	if _, err := tr.Next(); err != nil && !errors.Is(err, io.EOF) {
		return damaged(err)
	}
	return m, key, nil
}

// backupSchedule is serve's --backup-dir/--backup-every/--backup-keep.
type backupSchedule struct {
	dir   string
	every time.Duration
	keep  int
}

// runScheduledBackups writes a backup into dir every interval until ctx ends, keeping the newest
// keep of them. Each is a snapshot of store by the online backup API (db.DB.Backup).
func runScheduledBackups(ctx context.Context, sch backupSchedule, store *db.DB, dataDir string, now func() time.Time, log *slog.Logger, onDone func(time.Duration, error)) {
	t := time.NewTicker(sch.every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		start := now()
		name := filepath.Join(sch.dir, "troco-"+start.UTC().Format("20060102T150405Z")+".backup")
		m, err := writeBackup(ctx, name, dataDir, start, func(snap string) error { return store.Backup(ctx, snap) })
		took := now().Sub(start)
		if onDone != nil {
			onDone(took, err)
		}
		if err != nil {
			log.Error("backup failed", "file", name, "error", err)
			continue
		}
		log.Info("backup written", "file", name, "db_bytes", m.DBBytes, "duration_ms", took.Milliseconds())
		pruneBackups(sch.dir, sch.keep, log)
	}
}

func pruneBackups(dir string, keep int, log *slog.Logger) {
	matches, _ := filepath.Glob(filepath.Join(dir, "troco-*.backup"))
	sort.Strings(matches) // names sort by time
	for len(matches) > keep {
		if err := os.Remove(matches[0]); err != nil {
			log.Warn("could not remove an old backup", "file", matches[0], "error", err)
		}
		matches = matches[1:]
	}
}
