//go:build !unix

package persistence

import (
	"fmt"
	"io"
)

func flockDir(dir string) (io.Closer, error) {
	return nil, fmt.Errorf("data directory %s: locking is only supported on Unix", dir)
}
