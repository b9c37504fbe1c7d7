package main

import "syscall"

// childAttr puts a server in its own process group, and has the kernel kill
// it if the bench dies without cleaning up.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
}
