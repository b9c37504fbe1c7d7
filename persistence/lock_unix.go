//go:build unix

package persistence

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
)

// flockDir takes an exclusive flock on the directory's lock file. flock
// locks belong to the open file, so a second Open in the same process is
// refused too; the kernel drops the lock when the process dies.
func flockDir(dir string) (io.Closer, error) {
	f, err := os.OpenFile(filepath.Join(dir, lockName), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("data directory %s: cannot open lock file: %w", dir, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		_ = f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("data directory %s is locked by another Revolver process", dir)
		}
		return nil, fmt.Errorf("data directory %s: cannot lock: %w", dir, err)
	}
	return flocked{f}, nil
}

type flocked struct{ f *os.File }

func (l flocked) Close() error {
	err := syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN)
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	return err
}
