//go:build darwin || dragonfly || freebsd || netbsd || openbsd

package server

import (
	"errors"
	"time"

	"golang.org/x/sys/unix"
)

// poller is an event loop's readiness source: kqueue over its connections
// (level-triggered, as kqueue is without EV_CLEAR), plus a pipe that other
// goroutines write to wake it (EVFILT_USER is missing on some BSDs).
type poller struct {
	kq      int
	wakeR   int
	wakeW   int
	events  []unix.Kevent_t
	out     []pollEvent
	drain   [64]byte
	reading map[int]bool // whether EVFILT_READ is enabled, to build modifications
	writing map[int]bool
}

func newPoller() (*poller, error) {
	kq, err := unix.Kqueue()
	if err != nil {
		return nil, err
	}
	unix.CloseOnExec(kq)
	var fds [2]int
	if err := unix.Pipe(fds[:]); err != nil {
		unix.Close(kq)
		return nil, err
	}
	p := &poller{kq: kq, wakeR: fds[0], wakeW: fds[1], events: make([]unix.Kevent_t, 256),
		reading: map[int]bool{}, writing: map[int]bool{}}
	for _, fd := range fds {
		unix.CloseOnExec(fd)
		if err := unix.SetNonblock(fd, true); err != nil {
			p.close()
			return nil, err
		}
	}
	if err := p.apply(kev(p.wakeR, unix.EVFILT_READ, unix.EV_ADD)); err != nil {
		p.close()
		return nil, err
	}
	return p, nil
}

func kev(fd int, filter int16, flags uint16) unix.Kevent_t {
	var ev unix.Kevent_t
	unix.SetKevent(&ev, fd, int(filter), int(flags))
	return ev
}

func (p *poller) apply(changes ...unix.Kevent_t) error {
	if len(changes) == 0 {
		return nil
	}
	_, err := unix.Kevent(p.kq, changes, nil, nil)
	return err
}

// add watches a new connection for input.
func (p *poller) add(fd int) error {
	p.reading[fd] = true
	return p.apply(kev(fd, unix.EVFILT_READ, unix.EV_ADD))
}

// watch sets what fd is watched for: input, room to write, or both.
func (p *poller) watch(fd int, read, write bool) error {
	var ch []unix.Kevent_t
	if read != p.reading[fd] {
		flags := uint16(unix.EV_DISABLE)
		if read {
			flags = unix.EV_ENABLE
		}
		ch = append(ch, kev(fd, unix.EVFILT_READ, flags))
		p.reading[fd] = read
	}
	if write != p.writing[fd] {
		flags := uint16(unix.EV_DELETE)
		if write {
			flags = unix.EV_ADD
		}
		ch = append(ch, kev(fd, unix.EVFILT_WRITE, flags))
		p.writing[fd] = write
	}
	return p.apply(ch...)
}

// remove stops watching fd (closing it would drop its filters anyway; this
// forgets the poller's own notes).
func (p *poller) remove(fd int) {
	if p.writing[fd] {
		_ = p.apply(kev(fd, unix.EVFILT_WRITE, unix.EV_DELETE))
	}
	_ = p.apply(kev(fd, unix.EVFILT_READ, unix.EV_DELETE))
	delete(p.reading, fd)
	delete(p.writing, fd)
}

// wait blocks until a watched fd is ready, the poller is woken, or timeout
// passes (negative: no timeout), and returns the ready connections; woken
// reports a wake.
func (p *poller) wait(timeout time.Duration) (ready []pollEvent, woken bool, err error) {
	var ts *unix.Timespec
	if ms := pollMillis(timeout); ms >= 0 {
		t := unix.NsecToTimespec(int64(ms) * int64(time.Millisecond))
		ts = &t
	}
	n, err := unix.Kevent(p.kq, nil, p.events, ts)
	if err != nil {
		if errors.Is(err, unix.EINTR) {
			return nil, false, nil
		}
		return nil, false, err
	}
	out := p.out[:0]
	for _, ev := range p.events[:n] {
		fd := int(ev.Ident)
		if fd == p.wakeR {
			woken = true
			for {
				if k, err := unix.Read(p.wakeR, p.drain[:]); k <= 0 || err != nil {
					break
				}
			}
			continue
		}
		var flags pollFlags
		switch ev.Filter {
		case unix.EVFILT_READ:
			flags = pollRead
		case unix.EVFILT_WRITE:
			flags = pollWrite
		}
		if ev.Flags&(unix.EV_EOF|unix.EV_ERROR) != 0 {
			flags |= pollRead
		}
		out = append(out, pollEvent{fd: fd, flags: flags})
	}
	p.out = out
	return out, woken, nil
}

// wake interrupts wait from another goroutine.
func (p *poller) wake() {
	unix.Write(p.wakeW, []byte{1}) // a full pipe is already a pending wake
}

func (p *poller) close() {
	unix.Close(p.wakeR)
	unix.Close(p.wakeW)
	unix.Close(p.kq)
}
