package server

import (
	"net"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// TestAcceptedKeepalive checks the options a connection accepted by
// listenTCP ends up with: none with tcp-keepalive 0, Redis's with 300
// (idle 300 s, probes every 100 s, 3 of them).
func TestAcceptedKeepalive(t *testing.T) {
	ln, err := listenTCP("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	for _, tc := range []struct {
		secs                  int64
		on                    int
		idle, interval, count int
	}{
		{0, 0, -1, -1, -1},
		{300, 1, 300, 100, 3},
	} {
		cc, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		nc, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		setKeepalive(nc, tc.secs)
		raw, err := nc.(*net.TCPConn).SyscallConn()
		if err != nil {
			t.Fatal(err)
		}
		get := func(level, opt int) (v int) {
			raw.Control(func(fd uintptr) {
				v, err = unix.GetsockoptInt(int(fd), level, opt)
			})
			if err != nil {
				t.Fatal(err)
			}
			return v
		}
		if on := get(syscall.SOL_SOCKET, syscall.SO_KEEPALIVE); on != tc.on {
			t.Errorf("tcp-keepalive %d: SO_KEEPALIVE %d, want %d", tc.secs, on, tc.on)
		}
		if tc.on == 1 {
			got := [3]int{get(syscall.IPPROTO_TCP, unix.TCP_KEEPIDLE), get(syscall.IPPROTO_TCP, unix.TCP_KEEPINTVL),
				get(syscall.IPPROTO_TCP, unix.TCP_KEEPCNT)}
			if want := [3]int{tc.idle, tc.interval, tc.count}; got != want {
				t.Errorf("tcp-keepalive %d: idle, interval, count %v, want %v", tc.secs, got, want)
			}
		}
		nc.Close()
		cc.Close()
	}
}
