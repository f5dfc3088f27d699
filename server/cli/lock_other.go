//go:build !unix

package cli

// lockDB is a no-op where flock(2) does not exist: stop serve yourself before a restore.
func lockDB(dbPath string) (release func(), err error) { return func() {}, nil }
