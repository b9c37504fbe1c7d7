package main

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// evictSuite measures maxmemory eviction on both servers, memory only (a
// cache): whether used_memory holds the limit while random SETs keep
// coming with allkeys-lru, and a Zipfian read-through cache's hit rate and
// throughput under allkeys-lru and allkeys-lfu.
type evictSuite struct{}

func init() { register(evictSuite{}) }

func (evictSuite) Name() string { return "evict" }
func (evictSuite) About() string {
	return "maxmemory 256 MB: used_memory under 10M random SETs (allkeys-lru); Zipfian read-through cache hit rate (lru, lfu)"
}
func (evictSuite) Config(o *Options) ServerConfig {
	return ServerConfig{Persistence: false, Fsync: o.Fsync}
}

const (
	evictMaxMemory = 256 << 20
	evictValueLen  = 100
	// The cache's values are larger, so that the keys it touches (about
	// 1M of the 10M) are several times what 256 MB holds: with 100-byte
	// values they all fit in Redis and only cold misses are left.
	evictCacheValueLen = 1000
	evictConns         = 8
	evictPipeline      = 32
	evictZipfTheta     = 0.99
	evictSampleGap     = 50 * time.Millisecond
)

func (evictSuite) Run(ctx context.Context, env *Env) (*Result, error) {
	sets := env.Scaled(10_000_000)
	fillKeys := uint64(env.Scaled(20_000_000))
	cacheKeys := uint64(env.Scaled(10_000_000))
	cacheGets := env.Scaled(4_000_000)
	res := &Result{Views: []View{
		{Title: "Random SETs into maxmemory 256 MB, allkeys-lru: used_memory (INFO memory) sampled every 50 ms",
			RowPrefix: "fill", Metrics: []Metric{
				{Key: "ops", Label: "SET/s", Unit: "ops/s", Ratio: true},
				{Key: "maxused", Label: "max used_memory", Unit: "MB", Ratio: true},
				{Key: "maxpct", Label: "max / maxmemory", Unit: "%"},
				{Key: "over", Label: "samples over maxmemory", Unit: "%"},
				{Key: "keys", Label: "keys held at the end", Unit: "n", Ratio: true},
				{Key: "evicted", Label: "evicted_keys", Unit: "n"},
				{Key: "rss", Label: "RSS at the end", Unit: "MB"},
			}},
		{Title: fmt.Sprintf("Read-through cache: GET, on a miss SET; Zipfian keys (θ %.2f)", evictZipfTheta),
			RowPrefix: "cache", Metrics: []Metric{
				{Key: "hit", Label: "hit rate (2nd half)", Unit: "%", Ratio: true},
				{Key: "ops", Label: "requests/s", Unit: "ops/s", Ratio: true},
				{Key: "keys", Label: "keys held at the end", Unit: "n", Ratio: true},
				{Key: "maxused", Label: "max used_memory", Unit: "MB"},
			}},
	}}
	res.Notes = append(res.Notes,
		fmt.Sprintf("Both servers memory only (Redis: no AOF, no RDB; Revolver: --persistence off), "+
			"`CONFIG SET maxmemory %d` and the policy before each row, FLUSHALL before each row. "+
			"One round per row and server (each row is long).", evictMaxMemory),
		fmt.Sprintf("fill: %d `SET ev:<12 digits> <%d bytes>`, keys uniform over %d (several times what "+
			"256 MB holds), %d connections pipelining %d. A separate connection reads INFO memory every %v; "+
			"the maximum is over those samples and the ones after the run.", sets, evictValueLen, fillKeys,
			evictConns, evictPipeline, evictSampleGap),
		fmt.Sprintf("cache: %d GETs over %d keys drawn from a Zipfian distribution (θ %.2f, YCSB's generator), "+
			"%d connections each sending 16 GETs, then SETs (%d-byte values) for the misses in one pipeline. "+
			"The hit rate counts the second half of the GETs, after the cache warmed up.",
			cacheGets, cacheKeys, evictZipfTheta, evictConns, evictCacheValueLen),
		"used_memory is jemalloc's allocated bytes on Redis and the Go heap's live-plus-unswept objects on "+
			"Revolver (decision 0008); Revolver evicts to 75% of maxmemory by its live-heap estimate, leaving the "+
			"rest for garbage between collections.")

	restore := func() {
		for _, s := range env.Servers {
			if s.Owned {
				do(s.Addr, "CONFIG", "SET", "maxmemory", "0")
				do(s.Addr, "CONFIG", "SET", "maxmemory-policy", "noeviction")
			}
		}
	}
	defer restore()
	prepare := func(s *Server, policy string) error {
		if !s.Owned {
			return fmt.Errorf("%s: the evict suite needs a server it started (it sets maxmemory and flushes)", s.Name)
		}
		if err := env.Flush(s); err != nil {
			return err
		}
		if _, err := do(s.Addr, "CONFIG", "SET", "maxmemory", strconv.Itoa(evictMaxMemory),
			"maxmemory-policy", policy); err != nil {
			return fmt.Errorf("%s: %w", s.Name, err)
		}
		return nil
	}

	fill := res.NewRow("fill allkeys-lru")
	for _, s := range env.Servers {
		if err := prepare(s, "allkeys-lru"); err != nil {
			return nil, err
		}
		sample, err := evictFill(ctx, env, s, sets, fillKeys)
		if err != nil {
			return nil, fmt.Errorf("fill on %s: %w", s.Name, err)
		}
		fill.Add(s.Name, sample)
	}
	for _, policy := range []string{"allkeys-lru", "allkeys-lfu"} {
		row := res.NewRow("cache " + policy)
		for _, s := range env.Servers {
			if err := prepare(s, policy); err != nil {
				return nil, err
			}
			sample, err := evictCache(ctx, env, s, cacheGets, cacheKeys)
			if err != nil {
				return nil, fmt.Errorf("cache %s on %s: %w", policy, s.Name, err)
			}
			row.Add(s.Name, sample)
		}
	}
	return res, nil
}

// memorySampler reads used_memory every evictSampleGap until stopped.
type memorySampler struct {
	max, samples, over int64
	stop               chan struct{}
	done               chan error
}

func sampleMemory(addr string) (*memorySampler, error) {
	c, err := Dial(addr, 5*time.Second)
	if err != nil {
		return nil, err
	}
	m := &memorySampler{stop: make(chan struct{}), done: make(chan error, 1)}
	go func() {
		defer c.Close()
		tick := time.NewTicker(evictSampleGap)
		defer tick.Stop()
		for {
			v, err := c.DoTimeout(10*time.Second, "INFO", "memory")
			if err != nil {
				m.done <- err
				return
			}
			used, _ := strconv.ParseInt(infoField(v.Str, "used_memory"), 10, 64)
			m.samples++
			m.max = max(m.max, used)
			if used > evictMaxMemory {
				m.over++
			}
			select {
			case <-m.stop:
				m.done <- nil
				return
			case <-tick.C:
			}
		}
	}()
	return m, nil
}

func (m *memorySampler) finish() error {
	// A few samples after the load, as memory settles.
	time.Sleep(3 * evictSampleGap)
	close(m.stop)
	return <-m.done
}

// evictFill runs n random SETs on s and reports throughput and memory.
func evictFill(ctx context.Context, env *Env, s *Server, n int, keys uint64) (map[string]float64, error) {
	mem, err := sampleMemory(s.Addr)
	if err != nil {
		return nil, err
	}
	value := strings.Repeat("v", evictValueLen)
	var issued, errs atomic.Int64
	var firstErr atomic.Value
	begin := time.Now()
	err = evictConnsRun(ctx, s.Addr, func(i int, c *Conn) error {
		r := newRand(uint64(i) + 1)
		for {
			start := issued.Add(evictPipeline) - evictPipeline
			if start >= int64(n) || ctx.Err() != nil {
				return ctx.Err()
			}
			batch := min(evictPipeline, n-int(start))
			for j := 0; j < batch; j++ {
				b := appendHeader(nil, '*', 3)
				b = appendBulkString(b, "SET")
				b = appendRandArg(b, "ev:", r.Uint64N(keys))
				c.AppendRaw(appendBulkString(b, value))
			}
			if err := c.Flush(); err != nil {
				return err
			}
			for j := 0; j < batch; j++ {
				rep, err := c.Skip()
				if err != nil {
					return err
				}
				if rep.err != "" { // an OOM is not a SET done: the row fails
					errs.Add(1)
					firstErr.CompareAndSwap(nil, rep.err)
				}
			}
			if i == 0 && start%(1<<16) < evictPipeline {
				env.Prog.Status(fmt.Sprintf("evict fill on %s: %d/%d SETs", s.Name, start, n))
			}
		}
	})
	elapsed := time.Since(begin)
	if err != nil {
		return nil, err
	}
	if err := mem.finish(); err != nil {
		return nil, err
	}
	if n := errs.Load(); n > 0 {
		return nil, ErrorReplies{N: n, First: firstErr.Load().(string)}
	}
	out := map[string]float64{
		"errors":  0, // any failed the row above; recorded to show the replies were checked
		"ops":     float64(n) / elapsed.Seconds(),
		"maxused": float64(mem.max),
		"maxpct":  100 * float64(mem.max) / evictMaxMemory,
		"over":    100 * float64(mem.over) / float64(max(mem.samples, 1)),
	}
	return withKeysAndEvicted(s, out)
}

// withKeysAndEvicted adds the key count, evicted_keys and RSS to a sample.
func withKeysAndEvicted(s *Server, out map[string]float64) (map[string]float64, error) {
	keys, err := do(s.Addr, "DBSIZE")
	if err != nil {
		return nil, err
	}
	out["keys"], _ = strconv.ParseFloat(keys, 64)
	stats, err := do(s.Addr, "INFO", "stats")
	if err != nil {
		return nil, err
	}
	out["evicted"], _ = strconv.ParseFloat(infoField(stats, "evicted_keys"), 64)
	if ps, err := readProcStats(s.PID()); err == nil {
		out["rss"] = float64(ps.RSS)
	}
	return out, nil
}

// evictCache runs the read-through cache load on s.
func evictCache(ctx context.Context, env *Env, s *Server, gets int, keys uint64) (map[string]float64, error) {
	mem, err := sampleMemory(s.Addr)
	if err != nil {
		return nil, err
	}
	z := newZipf(keys, evictZipfTheta)
	value := strings.Repeat("c", evictCacheValueLen)
	const batch = 16
	var issued, hits, counted, requests atomic.Int64
	begin := time.Now()
	err = evictConnsRun(ctx, s.Addr, func(i int, c *Conn) error {
		r := newRand(uint64(i) + 100)
		var ks [batch]uint64
		for {
			start := issued.Add(batch) - batch
			if start >= int64(gets) || ctx.Err() != nil {
				return ctx.Err()
			}
			for j := range ks {
				ks[j] = z.next(r)
				b := appendHeader(nil, '*', 2)
				b = appendBulkString(b, "GET")
				c.AppendRaw(appendRandArg(b, "cache:", ks[j]))
			}
			if err := c.Flush(); err != nil {
				return err
			}
			missed := 0
			for j := range ks {
				rep, err := c.Skip()
				if err != nil {
					return err
				}
				if rep.err != "" {
					return ReplyError(rep.err)
				}
				if !rep.empty {
					if start >= int64(gets/2) {
						hits.Add(1)
					}
					continue
				}
				b := appendHeader(nil, '*', 3)
				b = appendBulkString(b, "SET")
				b = appendRandArg(b, "cache:", ks[j])
				c.AppendRaw(appendBulkString(b, value))
				missed++
			}
			if start >= int64(gets/2) {
				counted.Add(batch)
			}
			if missed > 0 {
				if err := c.Flush(); err != nil {
					return err
				}
				for j := 0; j < missed; j++ {
					rep, err := c.Skip()
					if err != nil {
						return err
					}
					if rep.err != "" {
						return ReplyError(rep.err)
					}
				}
			}
			requests.Add(int64(batch + missed))
			if i == 0 && start%(1<<15) < batch {
				env.Prog.Status(fmt.Sprintf("evict cache on %s: %d/%d GETs", s.Name, start, gets))
			}
		}
	})
	elapsed := time.Since(begin)
	if err != nil {
		return nil, err
	}
	if err := mem.finish(); err != nil {
		return nil, err
	}
	out := map[string]float64{
		"errors":  0, // as in evictFill
		"hit":     100 * float64(hits.Load()) / float64(max(counted.Load(), 1)),
		"ops":     float64(requests.Load()) / elapsed.Seconds(),
		"maxused": float64(mem.max),
	}
	return withKeysAndEvicted(s, out)
}

// evictConnsRun runs work on evictConns connections at once.
func evictConnsRun(ctx context.Context, addr string, work func(i int, c *Conn) error) error {
	var wg sync.WaitGroup
	errs := make(chan error, evictConns)
	for i := 0; i < evictConns; i++ {
		c, err := Dial(addr, 5*time.Second)
		if err != nil {
			return err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer c.Close()
			if err := work(i, c); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// zipf draws integers in [0, n) with P(i) proportional to 1/(i+1)^theta,
// by Gray et al.'s method as YCSB's ZipfianGenerator does (theta < 1).
type zipf struct {
	n                        uint64
	theta, alpha, zetan, eta float64
	half                     float64 // 1 + 0.5^theta
}

func newZipf(n uint64, theta float64) *zipf {
	zetan := 0.0
	for i := uint64(1); i <= n; i++ {
		zetan += 1 / math.Pow(float64(i), theta)
	}
	zeta2 := 1 + 1/math.Pow(2, theta)
	return &zipf{n: n, theta: theta, alpha: 1 / (1 - theta), zetan: zetan,
		eta:  (1 - math.Pow(2/float64(n), 1-theta)) / (1 - zeta2/zetan),
		half: 1 + math.Pow(0.5, theta)}
}

func (z *zipf) next(r *rand.Rand) uint64 {
	u := r.Float64()
	uz := u * z.zetan
	switch {
	case uz < 1:
		return 0
	case uz < z.half:
		return 1
	}
	return min(uint64(float64(z.n)*math.Pow(z.eta*u-z.eta+1, z.alpha)), z.n-1)
}
