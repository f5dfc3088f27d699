//go:build unix

package cli

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// lockDB takes the lock serve holds on its database file (<db>.lock) for as long as it runs, so
// restore and a second serve can tell that the database is in use. It fails at once (errLocked)
// when another process holds it; the kernel releases it when the holder exits, even on kill -9.
func lockDB(dbPath string) (release func(), err error) {
	f, err := os.OpenFile(dbPath+".lock", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", dbPath, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, errLocked
		}
		return nil, fmt.Errorf("lock %s: %w", dbPath, err)
	}
	return func() { f.Close() }, nil
}
