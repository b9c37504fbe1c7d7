//go:build linux

package server

import (
	"errors"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// poller is an event loop's readiness source: level-triggered epoll over
// its connections, plus an eventfd that other goroutines write to wake it.
type poller struct {
	epfd    int
	wakefd  int
	events  []unix.EpollEvent
	out     []pollEvent
	wakeBuf [8]byte
}

func newPoller() (*poller, error) {
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, err
	}
	wakefd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		unix.Close(epfd)
		return nil, err
	}
	p := &poller{epfd: epfd, wakefd: wakefd, events: make([]unix.EpollEvent, 256)}
	if err := p.ctl(unix.EPOLL_CTL_ADD, wakefd, unix.EPOLLIN); err != nil {
		p.close()
		return nil, err
	}
	return p, nil
}

func (p *poller) ctl(op, fd int, events uint32) error {
	return unix.EpollCtl(p.epfd, op, fd, &unix.EpollEvent{Events: events, Fd: int32(fd)})
}

// add watches a new connection for input.
func (p *poller) add(fd int) error { return p.ctl(unix.EPOLL_CTL_ADD, fd, unix.EPOLLIN) }

// watch sets what fd is watched for: input, room to write, or both.
func (p *poller) watch(fd int, read, write bool) error {
	var ev uint32
	if read {
		ev |= unix.EPOLLIN
	}
	if write {
		ev |= unix.EPOLLOUT
	}
	return p.ctl(unix.EPOLL_CTL_MOD, fd, ev)
}

// remove stops watching fd (before it is closed).
func (p *poller) remove(fd int) { _ = p.ctl(unix.EPOLL_CTL_DEL, fd, 0) }

// wait blocks until a watched fd is ready, the poller is woken, or timeout
// passes (negative: no timeout), and returns the ready connections; woken
// reports a wake. A zero timeout only looks: it is a raw system call, so a
// busy loop's looks stay out of the scheduler's system call accounting
// (entersyscall/exitsyscall), and the runtime's monitor does not hand the
// loop's P to another thread while it looks.
func (p *poller) wait(timeout time.Duration) (ready []pollEvent, woken bool, err error) {
	var n int
	if timeout == 0 {
		n, err = epollLook(p.epfd, p.events)
	} else {
		n, err = unix.EpollWait(p.epfd, p.events, pollMillis(timeout))
	}
	if err != nil {
		if errors.Is(err, unix.EINTR) {
			return nil, false, nil
		}
		return nil, false, err
	}
	out := p.out[:0]
	for _, ev := range p.events[:n] {
		fd := int(ev.Fd)
		if fd == p.wakefd {
			woken = true
			unix.Read(p.wakefd, p.wakeBuf[:]) // resets the counter
			continue
		}
		var flags pollFlags
		if ev.Events&(unix.EPOLLIN|unix.EPOLLHUP|unix.EPOLLERR|unix.EPOLLRDHUP) != 0 {
			flags |= pollRead // a read then reports the end or the error
		}
		if ev.Events&(unix.EPOLLOUT|unix.EPOLLHUP|unix.EPOLLERR) != 0 {
			flags |= pollWrite
		}
		out = append(out, pollEvent{fd: fd, flags: flags})
	}
	p.out = out
	return out, woken, nil
}

// epollLook is epoll_pwait (which every Linux architecture has, unlike
// epoll_wait) with a zero timeout and no signal mask: it never blocks.
func epollLook(epfd int, events []unix.EpollEvent) (int, error) {
	n, _, e := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT, uintptr(epfd),
		uintptr(unsafe.Pointer(&events[0])), uintptr(len(events)), 0, 0, 0)
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}

// wake interrupts wait from another goroutine.
func (p *poller) wake() {
	one := [8]byte{1}
	unix.Write(p.wakefd, one[:])
}

func (p *poller) close() {
	unix.Close(p.wakefd)
	unix.Close(p.epfd)
}
