package server

import (
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/revolver-db/revolver/commands"
)

// slowlog keeps the most recent commands slower than
// slowlog-log-slower-than microseconds, newest first, like Redis's.
type slowlog struct {
	// threshold mirrors the config for a lock-free fast path: nearly every
	// command is faster than it.
	fast      atomic.Int64
	mu        sync.Mutex
	threshold int64 // microseconds; negative disables
	maxLen    int
	nextID    int64
	entries   []commands.SlowlogEntry // newest first
}

// Redis truncates what it keeps of each entry.
const (
	slowlogMaxArgc   = 32
	slowlogMaxArgLen = 128
)

func (l *slowlog) configure(threshold int64, maxLen int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.threshold, l.maxLen = threshold, maxLen
	if threshold < 0 || maxLen == 0 {
		l.fast.Store(1 << 62)
	} else {
		l.fast.Store(threshold)
	}
	if len(l.entries) > maxLen {
		l.entries = l.entries[:maxLen]
	}
}

// observe logs a command of the client at addr named name that ended at
// end (Redis stamps an entry when it logs it) after elapsed.
func (l *slowlog) observe(addr, name string, args [][]byte, end time.Time, elapsed time.Duration) {
	us := elapsed.Microseconds()
	if us < l.fast.Load() {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.threshold < 0 || us < l.threshold || l.maxLen == 0 {
		return
	}
	if len(args) > 0 {
		args = redactArgs(args)
	}
	n := min(len(args), slowlogMaxArgc)
	kept := make([][]byte, n)
	for i := 0; i < n; i++ {
		a := args[i]
		if i == slowlogMaxArgc-1 && len(args) > slowlogMaxArgc {
			kept[i] = []byte("... (" + strconv.Itoa(len(args)-slowlogMaxArgc+1) + " more arguments)")
			break
		}
		if len(a) > slowlogMaxArgLen {
			kept[i] = []byte(string(a[:slowlogMaxArgLen]) + "... (" + strconv.Itoa(len(a)-slowlogMaxArgLen) + " more bytes)")
			continue
		}
		kept[i] = append([]byte(nil), a...)
	}
	e := commands.SlowlogEntry{ID: l.nextID, Time: end.Unix(), Duration: us, Args: kept, Addr: addr, Name: name}
	l.nextID++
	l.entries = append([]commands.SlowlogEntry{e}, l.entries...)
	if len(l.entries) > l.maxLen {
		l.entries = l.entries[:l.maxLen]
	}
}

func (l *slowlog) get(n int) []commands.SlowlogEntry {
	l.mu.Lock()
	defer l.mu.Unlock()
	n = min(n, len(l.entries))
	return append([]commands.SlowlogEntry(nil), l.entries[:n]...)
}

func (l *slowlog) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.entries)
}

func (l *slowlog) reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.entries = nil
}

// SlowlogGet implements commands.Server.
func (s *Server) SlowlogGet(n int) []commands.SlowlogEntry { return s.slowlog.get(n) }

// SlowlogLen implements commands.Server.
func (s *Server) SlowlogLen() int { return s.slowlog.len() }

// SlowlogReset implements commands.Server.
func (s *Server) SlowlogReset() { s.slowlog.reset() }
