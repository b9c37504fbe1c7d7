//go:build linux

package server

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// The event loops' sockets are non-blocking, so a read or write returns at
// once: it goes to the kernel as a raw system call, without telling Go's
// scheduler that the thread may block (entersyscall/exitsyscall), which
// would also let the runtime's monitor hand the loop's P to another thread
// when a write to a busy loopback peer takes a few tens of microseconds.

func sysRead(fd int, p []byte) (int, error) { return rawIO(unix.SYS_READ, fd, p) }

func sysWrite(fd int, p []byte) (int, error) { return rawIO(unix.SYS_WRITE, fd, p) }

// rawIO is read(2) or write(2), by trap number, on a non-blocking fd.
func rawIO(trap uintptr, fd int, p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	n, _, e := unix.RawSyscall(trap, uintptr(fd), uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}
