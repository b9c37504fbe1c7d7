//go:build !linux

package server

import "golang.org/x/sys/unix"

func sysRead(fd int, p []byte) (int, error) { return unix.Read(fd, p) }

func sysWrite(fd int, p []byte) (int, error) { return unix.Write(fd, p) }
