package persistence

import (
	"fmt"
	"strings"
)

// Fsync is the appendfsync policy: when the change log reaches the disk.
// Every group commit reaches the OS (write(2)) before it is acknowledged
// under any policy, so a process crash never loses an acknowledged write.
// Pebble's own syncs are off the acknowledgment path and not affected.
type Fsync int32

const (
	// FsyncEverySec fsyncs the log about once a second: power loss loses at
	// most about a second of writes. The zero value, like Redis's default.
	FsyncEverySec Fsync = iota
	// FsyncAlways fsyncs before a write is acknowledged; concurrent writers
	// share each fsync.
	FsyncAlways
	// FsyncNo leaves flushing to the OS.
	FsyncNo
)

// ParseFsync parses an appendfsync value, case-insensitively like Redis.
func ParseFsync(s string) (Fsync, error) {
	switch strings.ToLower(s) {
	case "always":
		return FsyncAlways, nil
	case "everysec":
		return FsyncEverySec, nil
	case "no":
		return FsyncNo, nil
	}
	return 0, fmt.Errorf("invalid appendfsync value %q (want always, everysec or no)", s)
}

// String returns the appendfsync spelling of f.
func (f Fsync) String() string {
	switch f {
	case FsyncAlways:
		return "always"
	case FsyncEverySec:
		return "everysec"
	case FsyncNo:
		return "no"
	}
	return fmt.Sprintf("Fsync(%d)", int32(f))
}
