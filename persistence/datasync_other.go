//go:build !linux

package persistence

import "os"

// dataSync makes a segment's appended frames durable (fsync where the
// platform has no fdatasync worth using; macOS's File.Sync is F_FULLFSYNC).
func dataSync(f *os.File) error { return f.Sync() }
