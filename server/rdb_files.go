package server

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/revolver-db/revolver/persistence"
)

// The dump record (persistence.DumpRecord, in Revolver's own directory)
// identifies the last dump.rdb this server wrote or imported: its path, and
// its inode, size and modification time. A dump.rdb that does not match
// was put there by someone else (Redis), and a save keeps it.

// dumpIdentity renders what identifies fi at path.
func dumpIdentity(path string, fi os.FileInfo) string {
	var ino uint64
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		ino = uint64(st.Ino)
	}
	return fmt.Sprintf("%d %d %d %s", ino, fi.Size(), fi.ModTime().UnixNano(), path)
}

// knownDump reports whether the file at path, fi, is the one the record in
// own names.
func knownDump(own, path string, fi os.FileInfo) bool {
	b, err := os.ReadFile(filepath.Join(own, persistence.DumpRecord))
	return err == nil && strings.TrimSuffix(string(b), "\n") == dumpIdentity(path, fi)
}

// writeDumpRecord records the file now at path as this server's. Written
// in place: a torn record only makes the next save keep a copy.
func writeDumpRecord(own, path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(own, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(own, persistence.DumpRecord), []byte(dumpIdentity(path, fi)+"\n"), 0o644)
}
