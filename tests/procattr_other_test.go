//go:build !linux

package tests

import "syscall"

// dieWithTests has nothing to ask for outside Linux: there a server the
// tests start outlives a test binary that is killed.
func dieWithTests() *syscall.SysProcAttr { return &syscall.SysProcAttr{} }
