package main

import (
	"context"
	"fmt"
	"strconv"
	"time"
)

// expirySuite measures how late keyspace "expired" events arrive for keys
// with a 1 s TTL while many other keys are volatile. Redis finds expired
// keys by sampling, so with many long-TTL keys most short-TTL keys wait
// until a sample happens to hit them; Revolver keeps deadlines in order.
type expirySuite struct{}

func init() { register(expirySuite{}) }

func (expirySuite) Name() string { return "expiry-events" }
func (expirySuite) About() string {
	return "lateness of __keyevent@0__:expired for 1 s TTL keys among 0, 10k, 100k, 1M other volatile keys"
}
func (expirySuite) Config(o *Options) ServerConfig {
	return ServerConfig{Persistence: true, Fsync: o.Fsync}
}

const (
	expiryTTL      = time.Second
	expiryChannel  = "__keyevent@0__:expired"
	expiryOtherTTL = "3600000" // ms: the other volatile keys outlive the run
)

func (expirySuite) Run(ctx context.Context, env *Env) (*Result, error) {
	probes, spacing := 100, 10*time.Millisecond
	if env.Opts.Scale < 1 {
		probes = 10
	}
	wait := 2 * env.Opts.Duration
	res := &Result{Views: []View{{Title: "Lateness of expired events (event arrival minus the key's deadline), ms", Metrics: []Metric{
		{Key: "arrived", Label: "arrived", Unit: "%", Ratio: false},
		{Key: "p50", Label: "p50", Unit: "ms", Spread: true},
		{Key: "p99", Label: "p99", Unit: "ms"},
		{Key: "max", Label: "max", Unit: "ms"},
		earlyMetric,
	}}}}
	res.Notes = append(res.Notes,
		fmt.Sprintf("Per round and server: %d probe keys `SET rb:probe:<n>:<round>:<i> x` + `PEXPIREAT key <now+1000 ms>` "+
			"(deadline recorded by the client), one every %v, while a subscriber on `%s` (after "+
			"`CONFIG SET notify-keyspace-events Ex`) timestamps each event. The other volatile keys are "+
			"`SET rb:vol:<i> x PX %s`. Probe keys are never read, so only the server's own expiry finds them.",
			probes, spacing, expiryChannel, expiryOtherTTL),
		fmt.Sprintf("Events not arrived %v after the last probe's deadline are counted as missed (\"arrived\" is the "+
			"share that came); lateness percentiles are over the events that arrived at or after the key's deadline. "+
			"\"early\" counts events that arrived before it (a server deletes a key at its deadline, never before): "+
			"any fails the run.", wait))
	counts := []int{0, env.Scaled(10_000), env.Scaled(100_000), env.Scaled(1_000_000)}
	restore := map[*Server]string{}
	for _, s := range env.Servers {
		if v, err := do(s.Addr, "CONFIG", "GET", "notify-keyspace-events"); err == nil {
			restore[s] = v
		}
		if _, err := do(s.Addr, "CONFIG", "SET", "notify-keyspace-events", "Ex"); err != nil {
			return nil, fmt.Errorf("%s: %w", s.Name, err)
		}
	}
	defer func() {
		for _, s := range env.Servers {
			if !s.Owned {
				// Leave a server we did not start as we found it.
				fill(context.Background(), s.Addr, counts[len(counts)-1], 2, func(dst []byte, i int) []byte {
					dst = appendHeader(dst, '*', 2)
					dst = appendBulkString(dst, "UNLINK")
					return appendBulkString(dst, "rb:vol:"+strconv.Itoa(i))
				})
				do(s.Addr, "CONFIG", "SET", "notify-keyspace-events", restore[s])
			}
		}
	}()
	have := 0
	for _, n := range counts {
		row := res.NewRow(fmt.Sprintf("%d other volatile keys", n))
		for _, s := range env.Servers {
			env.Prog.Status(fmt.Sprintf("expiry-events: %s: %d volatile keys", s.Name, n))
			from := have
			err := fill(ctx, s.Addr, n-from, 4, func(dst []byte, i int) []byte {
				dst = appendHeader(dst, '*', 5)
				dst = appendBulkString(dst, "SET")
				dst = appendBulkString(dst, "rb:vol:"+strconv.Itoa(from+i))
				dst = appendBulkString(dst, "x")
				dst = appendBulkString(dst, "PX")
				return appendBulkString(dst, expiryOtherTTL)
			})
			if err != nil {
				return nil, fmt.Errorf("%s: loading volatile keys: %w", s.Name, err)
			}
		}
		have = max(have, n)
		for round := 1; round <= env.Opts.Rounds; round++ {
			for _, s := range env.Servers {
				env.Prog.Timed(fmt.Sprintf("expiry-events: %d volatile, %s, round %d/%d", n, s.Name, round,
					env.Opts.Rounds), expiryTTL+time.Duration(probes)*spacing+wait)
				prefix := fmt.Sprintf("rb:probe:%d:%d:", n, round)
				sample, err := expiryRound(ctx, s.Addr, prefix, probes, spacing, wait)
				if err != nil {
					return nil, fmt.Errorf("%s: %w", s.Name, err)
				}
				row.Add(s.Name, sample)
				res.noteEarly(row, s.Name, round, sample)
			}
		}
	}
	return res, nil
}

// expiryRound sets the probe keys and collects their expired events.
func expiryRound(ctx context.Context, addr, prefix string, probes int, spacing, wait time.Duration) (map[string]float64, error) {
	sub, err := Dial(addr, 5*time.Second)
	if err != nil {
		return nil, err
	}
	defer sub.Close()
	if _, err := sub.DoTimeout(5*time.Second, "SUBSCRIBE", expiryChannel); err != nil {
		return nil, err
	}
	type event struct {
		key string
		at  time.Time
	}
	events := make(chan event, 1024)
	go func() {
		defer close(events)
		for {
			v, err := sub.Read()
			if err != nil {
				return
			}
			if len(v.Elems) == 3 && v.Elems[0].Str == "message" {
				events <- event{key: v.Elems[2].Str, at: time.Now()}
			}
		}
	}()
	w, err := Dial(addr, 5*time.Second)
	if err != nil {
		return nil, err
	}
	defer w.Close()
	deadlines := map[string]int64{} // key -> deadline, unix ms
	arrived := map[string]time.Time{}
	collect := func(e event) {
		if _, ours := deadlines[e.key]; ours {
			arrived[e.key] = e.at
		}
	}
	var last int64
	for i := 0; i < probes; i++ {
		key := prefix + strconv.Itoa(i)
		last = time.Now().Add(expiryTTL).UnixMilli()
		deadlines[key] = last
		w.Append("SET", key, "x")
		w.Append("PEXPIREAT", key, strconv.FormatInt(last, 10))
		if err := w.Flush(); err != nil {
			return nil, err
		}
		for j := 0; j < 2; j++ {
			if _, err := w.Read(); err != nil {
				return nil, err
			}
		}
	drain:
		for {
			select {
			case e := <-events:
				collect(e)
			default:
				break drain
			}
		}
		time.Sleep(spacing)
	}
	timeout := time.NewTimer(time.Until(time.UnixMilli(last).Add(wait)))
	defer timeout.Stop()
	for len(arrived) < probes {
		select {
		case e, ok := <-events:
			if !ok {
				return nil, fmt.Errorf("subscriber connection closed")
			}
			collect(e)
		case <-timeout.C:
			return expirySample(deadlines, arrived), nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return expirySample(deadlines, arrived), nil
}

func expirySample(deadlines map[string]int64, arrived map[string]time.Time) map[string]float64 {
	h := NewHistogram()
	for key, at := range arrived {
		h.Record(at.UnixNano() - deadlines[key]*int64(time.Millisecond))
	}
	s := map[string]float64{"arrived": 100 * float64(len(arrived)) / float64(len(deadlines))}
	if h.Count() > 0 {
		s["p50"], s["p99"], s["max"] = ms(h.Quantile(0.5)), ms(h.Quantile(0.99)), ms(h.Max())
	}
	addEarly(s, h)
	return s
}
