//go:build linux

package persistence

import (
	"os"

	"golang.org/x/sys/unix"
)

// dataSync makes a segment's appended frames durable. fdatasync skips the
// journal commit that a timestamp-only change costs fsync, as Redis does for
// its AOF; the size change an append makes is still flushed.
func dataSync(f *os.File) error {
	for {
		err := unix.Fdatasync(int(f.Fd()))
		if err != unix.EINTR {
			return err
		}
	}
}
