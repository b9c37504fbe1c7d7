package tests

import "syscall"

// dieWithTests has the kernel kill a server the tests start when the test
// binary exits, however it exits.
func dieWithTests() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
