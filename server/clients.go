package server

import (
	"fmt"
	"math"
	"net"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/revolver-db/revolver/commands"
)

// ClientList implements commands.Server (CLIENT LIST), under the engine
// lock.
func (s *Server) ClientList(ids []int64, typ string) (string, error) {
	if typ != "" {
		switch strings.ToLower(typ) {
		case "normal", "pubsub", "master", "replica", "slave":
			typ = strings.ToLower(typ)
			if typ == "slave" {
				typ = "replica"
			}
		default:
			return "", fmt.Errorf("ERR Unknown client type '%s'", typ)
		}
	}
	var list []*Client
	if ids != nil {
		for _, id := range ids {
			if c, ok := s.clients[id]; ok {
				list = append(list, c)
			}
		}
	} else {
		for _, c := range s.clients {
			if typ == "" || c.clientType() == typ {
				list = append(list, c)
			}
		}
		sort.Slice(list, func(i, j int) bool { return list[i].id < list[j].id })
	}
	var b strings.Builder
	for _, c := range list {
		b.WriteString(c.Describe())
		b.WriteByte('\n')
	}
	return b.String(), nil
}

// ClientKill implements commands.Server (CLIENT KILL), under the engine
// lock. The caller's own connection closes after its reply.
func (s *Server) ClientKill(f commands.ClientFilter) (int, error) {
	n := 0
	for _, c := range s.clients {
		switch {
		case f.Addr != "" && c.addr != f.Addr,
			f.LAddr != "" && c.laddr != f.LAddr,
			f.Type != "" && c.clientType() != f.Type,
			f.ID != 0 && c.id != f.ID,
			f.User != "" && c.userName() != f.User,
			f.SkipMe && c.id == f.Self:
			continue
		}
		if c.id == f.Self {
			c.closing = true
		} else {
			// Gone at once, as Redis frees it: INFO, CLIENT LIST, PUBSUB
			// and tracking no longer count it; its loop closes the socket.
			c.kill()
			s.forget(c)
		}
		n++
	}
	return n, nil
}

// pauseState implements CLIENT PAUSE: until the deadline, the commands
// of clients are held back, all of them or only those that may write
// (Server.pauseHolds).
type pauseState struct {
	// end mirrors until (unix nanos, 0 for none) so the common case, no
	// pause, costs one atomic load per command and no clock read.
	end    atomic.Int64
	gen    atomic.Uint64 // counts pauses and unpauses: a held client looks again
	mu     sync.Mutex
	until  time.Time
	writes bool
	// shutdown holds writes while SHUTDOWN waits for replicas, apart
	// from CLIENT PAUSE: CLIENT UNPAUSE does not end it.
	shutdown bool
}

// publish sets end from the pause's state. Under mu.
func (p *pauseState) publish() {
	switch {
	case p.shutdown:
		p.end.Store(math.MaxInt64)
	case p.until.IsZero():
		p.end.Store(0)
	default:
		p.end.Store(p.until.UnixNano())
	}
	p.gen.Add(1)
}

// holdWritesForShutdown starts or ends the shutdown's hold on writes.
func (s *Server) holdWritesForShutdown(on bool) {
	p := &s.pause
	p.mu.Lock()
	p.shutdown = on
	p.publish()
	p.mu.Unlock()
	if !on {
		s.wakeLoops()
	}
}

// ClientPause implements commands.Server.
func (s *Server) ClientPause(ms int64, writesOnly bool) {
	p := &s.pause
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	until := now.Add(time.Duration(min(ms, int64(time.Duration(1<<62)/time.Millisecond))) * time.Millisecond)
	if p.until.After(now) {
		// A pause in progress: as in Redis, the more restrictive type and
		// the later end win.
		writesOnly = writesOnly && p.writes
		if p.until.After(until) {
			until = p.until
		}
	}
	p.until, p.writes = until, writesOnly
	p.publish()
}

// ClientUnpause implements commands.Server.
func (s *Server) ClientUnpause() {
	p := &s.pause
	p.mu.Lock()
	p.until = time.Time{}
	p.publish()
	p.mu.Unlock()
	s.wakeLoops()
}

// mode reports whether a pause is in force now, and whether it holds
// only the commands that may write.
func (p *pauseState) mode(s *Server) (paused, writesOnly bool) {
	if end := p.end.Load(); end == 0 || time.Now().UnixNano() >= end || s.shutting.Load() {
		return false, false
	}
	p.mu.Lock()
	until, writes, shutdown := p.until, p.writes, p.shutdown
	p.mu.Unlock()
	if time.Now().Before(until) {
		return true, writes // CLIENT PAUSE ALL holds more than the shutdown
	}
	return shutdown, shutdown
}

// ends returns when the pause in progress ends.
func (p *pauseState) ends() (time.Time, bool) {
	end := p.end.Load()
	return time.Unix(0, end), end != 0
}

// pauseHolds reports whether CLIENT PAUSE holds c's command now, as Redis
// decides once every other check let it through: under ALL every command
// (CLIENT UNPAUSE included: only the deadline ends such a pause for
// others); under WRITE those that may write (CallMayWrite, so PUBLISH,
// PFCOUNT, EVAL and FCALL too unless their script declares no-writes), and
// EXEC when it would run one. Queueing in MULTI is held as running.
func (s *Server) pauseHolds(c *Client, cmd *commands.Command, args [][]byte) bool {
	paused, writesOnly := s.pause.mode(s)
	switch {
	case !paused:
		return false
	case !writesOnly:
		return true
	case cmd.FullName() == "exec":
		return c.multi && c.queueMayWrite
	}
	return s.lua.CallMayWrite(cmd, args)
}

func isLoopback(addr string) bool {
	if isUnixSocket(addr) {
		return true // local, as Redis counts a Unix socket's clients
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// sampleMemory refreshes used_memory (the engine's estimate of the live
// heap, engine/evict_mem.go): at start-up, then on every cron tick.
func (s *Server) sampleMemory() {
	s.eng.Lock()
	used := s.eng.UsedMemory()
	s.eng.Unlock()
	s.usedMemory.Store(used)
	s.notePeak(used) // INFO's used_memory_peak (info_memory.go)
}

// cron runs the once-in-a-while chores: sampling memory for maxmemory and
// INFO, GC pacing, closing idle clients (timeout), the ops/sec window.
func (s *Server) cron() {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	lastOps, lastAt, n := s.stats.commands.Load(), time.Now(), 0
	gc := newGCPacer()
	for {
		select {
		case <-s.cronStop:
			return
		case now := <-tick.C:
			s.sampleMemory()
			if s.shutdownWaiting.Load() {
				s.eng.Lock()
				s.shutdownCron(now)
				s.eng.Unlock()
			}
			gc.update(s.maxMemory.Load(), s.stats.commands.Load())
			if s.store != nil {
				s.followMemoryLimit()
			}
			s.trk.cron()
			s.outputLimitCron()
			s.clientEvictionCron()
			s.compactKeyspace()
			n++
			if s.bg.due() || n%10 == 0 {
				s.saveCron(now)
			}
			if n%10 == 0 {
				ops := s.stats.commands.Load()
				s.stats.opsPerSec.Store(int64(float64(ops-lastOps) / now.Sub(lastAt).Seconds()))
				lastOps, lastAt = ops, now
				sampleNetRates(now)
				s.closeIdleClients(now)
				s.replMasterCron(now)
			}
			s.replicaCron(now)
		}
	}
}

// keyspaceCompactBudget is the bytes of records the cron moves per tick
// out of sparse pages (at 10 ticks a second, 2.5 MB/s): enough to keep up
// with deletes, small enough to hold the lock well under a millisecond.
const keyspaceCompactBudget = 256 << 10

// compactKeyspace gives back memory that deletes left in sparse pages.
func (s *Server) compactKeyspace() {
	s.eng.Lock()
	s.eng.CompactKeyspaces(keyspaceCompactBudget)
	s.eng.Unlock()
}

// closeIdleClients applies `timeout`: clients idle longer are closed,
// except subscribers, MONITOR feeds, blocked clients and the replication
// links, which Redis spares too.
func (s *Server) closeIdleClients(now time.Time) {
	limit := s.timeout.Load()
	if limit <= 0 {
		return
	}
	cutoff := now.Add(-time.Duration(limit) * time.Second).UnixNano()
	s.eng.Lock()
	defer s.eng.Unlock()
	for _, c := range s.clients {
		if c.Subscriptions() == 0 && !c.monitor && !c.master && !c.isReplica() && !c.blocked.Load() &&
			c.lastInteraction.Load() < cutoff {
			c.kill()
		}
	}
}
