//go:build linux

package server

import "golang.org/x/sys/unix"

// multiplexingAPI is INFO's name for what the event loops poll with.
const multiplexingAPI = "epoll"

func totalSystemMemory() int64 {
	var si unix.Sysinfo_t
	if unix.Sysinfo(&si) != nil {
		return 0
	}
	return int64(si.Totalram) * int64(si.Unit)
}

// rssFallback is never needed on Linux, which has /proc/self/statm.
func rssFallback() int64 { return 0 }
