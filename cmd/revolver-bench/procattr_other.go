//go:build !linux

package main

import "syscall"

// childAttr puts a server in its own process group. Only Linux can have the
// kernel kill it if the bench dies; elsewhere the bench's own cleanup must.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
