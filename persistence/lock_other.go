//go:build !unix

package persistence

import (
	"fmt"
	"os"
)

func lockDir(dir string) (*os.File, error) {
	return nil, fmt.Errorf("data directory %s: locking is only supported on Unix", dir)
}

func unlockDir(f *os.File) error { return f.Close() }
