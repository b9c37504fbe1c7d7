package server

import (
	"cmp"
	"slices"
	"sync/atomic"
	"time"
)

// The clients' memory, as Redis counts it in used_memory and
// mem_clients_normal, and client eviction (Redis 7.0's maxmemory-clients,
// networking.c evictClients; decision 0019).
//
// Each client's loop measures it at the points where it changes (after a
// read, after sending output) and adds the difference to one total: no
// scan, and in the steady state of a busy connection no atomic either, as
// nothing changed. A client counts its fixed state, its request buffer
// (which the arguments of its commands point into, big arguments
// included), the output its socket has not taken and its MULTI queue.
// Replicas are counted apart (mem_clients_slaves, replMemory), as Redis
// does; pushes not yet taken by the loop are counted once it has them, a
// moment later.

// clientMem is the server's side of the accounting.
type clientMem struct {
	total atomic.Int64 // the clients' memory but replicas'
	// limit is maxmemory-clients in bytes (a percentage of maxmemory
	// resolved), 0 for none.
	limit    atomic.Int64
	evicting atomic.Bool  // an eviction runs
	retryAt  atomic.Int64 // unix nanos: after finding nothing to evict, no new try before
	evicted  atomic.Int64 // INFO's evicted_clients
}

// minClientsLimit is the lowest maxmemory-clients Redis applies (a lower
// setting is raised to it), so that a bad setting cannot cut every
// connection.
const minClientsLimit = 128 << 10

// applyClientEviction resolves maxmemory-clients: bytes, or a percentage
// of maxmemory (none while maxmemory is 0), as Redis's
// getClientEvictionLimit.
func (s *Server) applyClientEviction() {
	// Kept as "N%" or bytes (config_params.go).
	v, _ := parseNumber(kindMemPercent, s.cfg.extraString("maxmemory-clients"))
	var limit int64
	switch {
	case v > 0:
		limit = v
	case v < 0 && s.cfg.MaxMemory > 0:
		limit = int64(float64(s.cfg.MaxMemory) * float64(-v) / 100)
		if limit <= 0 { // past int64 in the product
			limit = 1<<63 - 1
		}
	}
	if limit > 0 {
		limit = max(limit, minClientsLimit)
	}
	s.cmem.limit.Store(limit)
	if limit > 0 && s.cmem.total.Load() >= limit {
		s.startClientEviction()
	}
}

// memNow is the client's memory as its loop sees it. Called by the loop
// after the output was sent, so the reply buffer is empty or, for a
// client parked in a blocking command, another's to write: what is owed
// is in out.
func (c *Client) memNow() int64 {
	if c.isReplica() {
		return 0 // counted apart
	}
	return int64(clientSize) + c.rd.rbs.Load() + int64(len(c.out)) + c.queueMem
}

// accountMem brings the server's total up to date with c's memory, and
// starts client eviction when that passes maxmemory-clients. On c's loop.
func (c *Client) accountMem() {
	m := c.memNow()
	d := m - c.memSeen
	if d == 0 {
		return
	}
	c.memSeen = m
	c.memAcct.Store(m)
	total := c.s.cmem.total.Add(d)
	if d > 0 {
		if limit := c.s.cmem.limit.Load(); limit > 0 && total >= limit {
			c.s.startClientEviction()
		}
	}
}

// unaccountMem takes a closed client out of the total. On its loop.
func (c *Client) unaccountMem() {
	if c.memSeen != 0 {
		c.s.cmem.total.Add(-c.memSeen)
		c.memSeen = 0
		c.memAcct.Store(0)
	}
}

// startClientEviction runs an eviction of clients in the background,
// unless one runs, or the last one found nothing to evict less than
// 100 ms ago. It never blocks: loops call it without the engine lock,
// but the loop's goroutine may be standing in for a slow script that
// holds it.
func (s *Server) startClientEviction() {
	if time.Now().UnixNano() < s.cmem.retryAt.Load() || !s.cmem.evicting.CompareAndSwap(false, true) {
		return
	}
	go func() {
		s.eng.Lock()
		s.evictClients()
		s.eng.Unlock()
		s.cmem.evicting.Store(false)
	}()
}

// evictClients closes clients, those using the most memory first, until
// the clients' memory is under maxmemory-clients, as Redis 7.0 does. It
// may close normal and pub/sub clients, not replicas, the master link or
// those that said CLIENT NO-EVICT on. (Redis walks buckets of clients by
// powers of two; here the clients are sorted, which it runs only when over
// the limit.) Under the engine lock.
func (s *Server) evictClients() {
	limit := s.cmem.limit.Load()
	if limit <= 0 {
		return
	}
	// The total is summed here again: it still counts clients closed but
	// not yet taken out by their loops, which must not make others go.
	type cand struct {
		c   *Client
		mem int64
	}
	var total int64
	var cands []cand
	for _, c := range s.clients {
		m := c.memAcct.Load()
		total += m
		if !c.noEvict && !c.master && !c.isReplica() && !c.killed.Load() {
			cands = append(cands, cand{c, m})
		}
	}
	if total < limit {
		return
	}
	slices.SortFunc(cands, func(a, b cand) int { return cmp.Compare(b.mem, a.mem) })
	for _, v := range cands {
		if total < limit {
			return
		}
		s.log.Info("Evicting client: " + v.c.Describe())
		total -= v.mem
		v.c.kill()
		s.forget(v.c)
		s.cmem.evicted.Add(1)
	}
	if total >= limit {
		s.log.Warn("Over client maxmemory after evicting all evictable clients")
		s.cmem.retryAt.Store(time.Now().Add(100 * time.Millisecond).UnixNano())
	}
}

// clientEvictionCron retries an eviction that found nothing to evict once
// its pause is over, for clients that grow with no loop looking.
func (s *Server) clientEvictionCron() {
	if limit := s.cmem.limit.Load(); limit > 0 && s.cmem.total.Load() >= limit {
		s.startClientEviction()
	}
}
