//go:build darwin || dragonfly || freebsd || netbsd || openbsd

package server

import (
	"runtime"

	"golang.org/x/sys/unix"
)

// multiplexingAPI is INFO's name for what the event loops poll with.
const multiplexingAPI = "kqueue"

func totalSystemMemory() int64 {
	name := "hw.physmem"
	if runtime.GOOS == "darwin" {
		name = "hw.memsize"
	}
	n, err := unix.SysctlUint64(name)
	if err != nil {
		return 0
	}
	return int64(n)
}
