package server

import (
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"

	"golang.org/x/sys/unix"
)

// Connections are accepted through Go's net package (addresses, keepalive,
// TCP_NODELAY), then detached from Go's network poller: an event loop owns
// the socket from then on, and Go's poller must not wake for its traffic.

// errWouldBlock is a non-blocking read that found nothing to read.
var errWouldBlock = errors.New("would block")

// detach returns a descriptor of its own for nc's socket, non-blocking and
// unknown to Go's poller, and closes nc (the socket lives on in the copy).
func detach(nc net.Conn) (int, error) {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		nc.Close()
		return -1, fmt.Errorf("connection %T has no descriptor", nc)
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		nc.Close()
		return -1, err
	}
	fd, dupErr := -1, error(nil)
	err = raw.Control(func(f uintptr) {
		fd, dupErr = unix.FcntlInt(f, unix.F_DUPFD_CLOEXEC, 0)
	})
	nc.Close()
	if err == nil {
		err = dupErr
	}
	if err == nil {
		err = unix.SetNonblock(fd, true)
	}
	if err != nil {
		if fd >= 0 {
			unix.Close(fd)
		}
		return -1, err
	}
	return fd, nil
}

// sockReader is the request reader's source: one non-blocking read of the
// socket, errWouldBlock when nothing is there, io.EOF when the peer is done.
type sockReader int

func (fd sockReader) Read(p []byte) (int, error) {
	for {
		n, err := sysRead(int(fd), p)
		countRead(n)
		switch {
		case err == nil && n == 0 && len(p) > 0:
			return 0, io.EOF
		case err == nil:
			return n, nil
		case err == unix.EINTR:
			continue
		case err == unix.EAGAIN:
			return 0, errWouldBlock
		}
		return 0, err
	}
}

// writeSock writes as much of b as the socket takes now: n bytes, and an
// error only when the connection is broken.
func writeSock(fd int, b []byte) (int, error) {
	done := 0
	for done < len(b) {
		n, err := sysWrite(fd, b[done:])
		countWrite(n)
		switch {
		case err == nil:
			done += n
		case err == unix.EINTR:
		case err == unix.EAGAIN:
			return done, nil
		default:
			return done, err
		}
	}
	return done, nil
}

func closeSock(fd int) { unix.Close(fd) }
