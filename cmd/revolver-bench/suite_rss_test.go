package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math"
	"math/rand/v2"
	"os/exec"
	"strings"
	"testing"
	"time"
)

func TestRSSKeyAndValueShapes(t *testing.T) {
	for _, i := range []int{0, 7, 1_000_000, 99_999_999} {
		key := string(appendRSSKey(nil, i))
		if !strings.HasPrefix(key, "$10\r\nk:") || len(key) != len("$10\r\n")+10+2 {
			t.Errorf("key %d: %q, want a 10-byte bulk string", i, key)
		}
		for _, vlen := range []int{4, 32, 100} {
			v := appendRSSValue(nil, i, vlen)
			body := strings.TrimSuffix(strings.SplitN(string(v), "\r\n", 2)[1], "\r\n")
			if len(body) != vlen {
				t.Errorf("value %d × %d: %q has %d bytes", i, vlen, v, len(body))
			}
		}
	}
	if a, b := appendRSSValue(nil, 1, 32), appendRSSValue(nil, 2, 32); bytes.Equal(a, b) {
		t.Errorf("neighbouring values are equal: %q", a)
	}
}

func TestRSSSets(t *testing.T) {
	names := func(sets []rssSet) string {
		var out []string
		for _, s := range sets {
			out = append(out, s.name)
		}
		return strings.Join(out, "\n")
	}
	sets := rssSets(1_000_000, 10_000, false)
	got := names(sets)
	for _, want := range []string{"small server: 10k strings × 32 B", "strings: 1M × 32 B values",
		"strings: 1M × 100 B values", "hashes: 10k × 100 fields", "set: 1 key × 1M members",
		"zset: 1 key × 1M members", "DELAY: 1M pending timers", "QUEUE: 1M ready jobs", "NUMPOOL: 1M idle+up numbers"} {
		if !strings.Contains(got, want) {
			t.Errorf("rows lack %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "10M") {
		t.Errorf("10M rows without --rss-10m:\n%s", got)
	}
	if big := names(rssSets(1_000_000, 10_000, true)); !strings.Contains(big, "strings: 10M × 32 B values") ||
		!strings.Contains(big, "strings: 10M × 100 B values") {
		t.Errorf("no 10M rows with --rss-10m:\n%s", big)
	}
	for _, s := range sets {
		if s.gen == nil || s.cmds == 0 || s.elems == 0 || s.target == 0 || s.command == "" {
			t.Errorf("row %q is incomplete: %+v", s.name, s)
		}
		if (s.revRan != "") != (s.redisGen != nil) {
			t.Errorf("row %q: a Redis recipe without saying what each side ran, or the reverse", s.name)
		}
	}
}

func TestRSSFlags(t *testing.T) {
	if _, err := parseOptions([]string{"--suite", "rss", "--rss-wait", "2s", "--rss-10m", "--drift-duration", "3m"},
		io.Discard); err != nil {
		t.Fatal(err)
	}
	if rssFlags.wait != 2*time.Second || !rssFlags.big || rssFlags.drift != 3*time.Minute {
		t.Errorf("flags parsed to %+v", rssFlags)
	}
	if _, err := parseOptions([]string{"--suite", "rss"}, io.Discard); err != nil {
		t.Fatal(err)
	}
	if rssFlags.wait != 0 || rssFlags.big || rssFlags.drift != 0 {
		t.Errorf("a second parse kept the first's flags: %+v", rssFlags)
	}
	for _, c := range []struct {
		d, def time.Duration
		scale  float64
		want   time.Duration
	}{
		{0, 30 * time.Second, 1, 30 * time.Second},
		{0, 30 * time.Second, 2, 30 * time.Second},
		{0, 30 * time.Second, 0.001, 30 * time.Millisecond},
		{5 * time.Second, 30 * time.Second, 0.001, 5 * time.Second},
		{0, time.Second, 1e-9, time.Millisecond},
	} {
		if got := scaledDuration(c.d, c.def, c.scale); got != c.want {
			t.Errorf("scaledDuration(%v, %v, %g) = %v, want %v", c.d, c.def, c.scale, got, c.want)
		}
	}
}

func TestParseProcStatus(t *testing.T) {
	ps, err := parseProcStatus([]byte("Name:\tredis-server\nVmPeak:\t  999 kB\nVmHWM:\t    2048 kB\nVmRSS:\t    1024 kB\n" +
		"RssAnon:\t     512 kB\nRssFile:\t     512 kB\n"))
	if err != nil || ps.RSS != 1024*1024 || ps.HWM != 2048*1024 || ps.Anon != 512*1024 {
		t.Errorf("got %+v, %v", ps, err)
	}
	if _, err := parseProcStatus([]byte("Name:\tx\nVmRSS:\t1 kB\n")); err == nil {
		t.Errorf("no error without VmHWM")
	}
}

func TestLeastSquaresSlope(t *testing.T) {
	xs := []float64{0, 1, 2, 3, 4}
	if s, ok := leastSquaresSlope(xs, []float64{1, 3, 5, 7, 9}); !ok || math.Abs(s-2) > 1e-12 {
		t.Errorf("line of slope 2: %v %v", s, ok)
	}
	if s, ok := leastSquaresSlope(xs, []float64{5, 5, 5, 5, 5}); !ok || s != 0 {
		t.Errorf("flat: %v %v", s, ok)
	}
	// Noise around a falling line still fits it.
	r := rand.New(rand.NewPCG(1, 2))
	var nx, ny []float64
	for i := range 1000 {
		nx = append(nx, float64(i))
		ny = append(ny, 100-0.5*float64(i)+r.NormFloat64())
	}
	if s, ok := leastSquaresSlope(nx, ny); !ok || math.Abs(s+0.5) > 0.01 {
		t.Errorf("noisy slope -0.5: %v %v", s, ok)
	}
	if _, ok := leastSquaresSlope([]float64{1}, []float64{1}); ok {
		t.Errorf("one point has a slope")
	}
	if _, ok := leastSquaresSlope([]float64{1, 1}, []float64{1, 2}); ok {
		t.Errorf("one x has a slope")
	}
}

func TestDriftSummary(t *testing.T) {
	// 10 minutes, a reading a second: RSS climbs 1 MB a minute in the
	// first half and holds in the second, with a spike at 100 s.
	var samples []driftSample
	for s := 0; s <= 600; s++ {
		rss := 100e6 + min(float64(s), 300)/60*1e6
		if s == 100 {
			rss = 500e6
		}
		samples = append(samples, driftSample{t: float64(s), rss: rss, used: 50e6 + float64(s)*1e6/60})
	}
	out := driftSummary(samples, 10*time.Minute)
	for k, want := range map[string]float64{"rssstart": 100e6, "rssmid": 105e6, "rssend": 105e6, "rssmax": 500e6,
		"slope": 0, "usedslope": 1, "usedstart": 50e6, "usedend": 60e6, "samples": 601} {
		if math.Abs(out[k]-want) > 1e-6*math.Max(1, math.Abs(want)) {
			t.Errorf("%s = %v, want %v", k, out[k], want)
		}
	}
}

func TestDriftCommandsAndPreload(t *testing.T) {
	if got := driftPreloaded(7); got != 5 {
		t.Errorf("preload of 7 keys: %d", got)
	}
	if got := driftPreloaded(10); got != 8 { // 0-4 and 7-9
		t.Errorf("preload of 10 keys: %d", got)
	}
	r := rand.New(rand.NewPCG(3, 4))
	counts := map[string]int{}
	for range 10_000 {
		cmd := string(driftCommand(nil, r, 1000, 1000))
		switch {
		case strings.HasPrefix(cmd, "*3\r\n$3\r\nSET\r\n$14\r\nd:"):
			counts["set"]++
		case strings.HasPrefix(cmd, "*2\r\n$3\r\nDEL\r\n$14\r\nd:"):
			counts["del"]++
		case strings.HasPrefix(cmd, "*5\r\n$3\r\nSET\r\n$14\r\nt:") && strings.Contains(cmd, "\r\n$2\r\nPX\r\n"):
			counts["ttl"]++
		default:
			t.Fatalf("unexpected command %q", cmd)
		}
	}
	for k, want := range map[string]int{"set": 5000, "del": 2000, "ttl": 3000} {
		if math.Abs(float64(counts[k]-want)) > 300 {
			t.Errorf("%s: %d of 10000, want about %d", k, counts[k], want)
		}
	}
	if got := shortDuration(10 * time.Minute); got != "10m" {
		t.Errorf("shortDuration(10m) = %q", got)
	}
	if got := shortDuration(600 * time.Millisecond); got != "600ms" {
		t.Errorf("shortDuration(600ms) = %q", got)
	}
}

// TestSmokeRSSSuites runs the rss and drift suites at a tiny scale, against
// redis-server too when it is installed, and checks their tables.
func TestSmokeRSSSuites(t *testing.T) {
	bin := testRevolverBinary(t)
	out := t.TempDir()
	args := []string{"--suite", "rss,drift", "--rounds", "1", "--scale", "0.001", "--rss-wait", "200ms",
		"--drift-duration", "2s", "--revolver-bin", bin, "--out", out, "--json"}
	sides := []string{"Revolver"}
	if _, err := exec.LookPath("redis-server"); err == nil {
		args = append(args, "--vs", "redis")
		sides = append(sides, "Redis")
	} else {
		t.Log("no redis-server in PATH: Revolver only")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	if err := run(ctx, args, &stdout, &stderr); err != nil {
		t.Fatalf("run: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	md, err := readResult(out, "rss", ".md")
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"| small server: 10 strings × 32 B", "| strings: 1k × 100 B values",
		"| hashes: 10 × 100 fields", "| NUMPOOL: 1k idle+up numbers", "mem_not_counted_for_evict", "200ms after"} {
		if !strings.Contains(string(md), w) {
			t.Errorf("rss markdown lacks %q:\n%s", w, md)
		}
	}
	b, err := readResult(out, "rss", ".json")
	if err != nil {
		t.Fatal(err)
	}
	var rep struct{ Rows []*Row }
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	for _, row := range rep.Rows {
		for _, side := range sides {
			sr := row.Sides[side]
			if sr == nil || sr.Skip {
				t.Logf("%s on %s skipped: %v", row.Name, side, sr)
				continue
			}
			for _, k := range []string{"rss", "used", "rsstotal", "hwm", "elems"} {
				if st, ok := sr.Summary(k); !ok || st.Median <= 0 {
					t.Errorf("%s on %s: %s = %v", row.Name, side, k, st.Median)
				}
			}
		}
	}
	md, err = readResult(out, "drift", ".md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), "| mixed writes: 2s at 30k commands/s, 1k keys") {
		t.Errorf("drift markdown lacks its row:\n%s", md)
	}
	b, _ = readResult(out, "drift", ".json")
	if err := json.Unmarshal(b, &rep); err != nil || len(rep.Rows) != 1 {
		t.Fatalf("drift json: %v, %d rows", err, len(rep.Rows))
	}
	for _, side := range sides {
		sr := rep.Rows[0].Sides[side]
		if sr == nil || len(sr.Rounds) != 1 {
			t.Fatalf("drift on %s: %+v", side, sr)
		}
		r := sr.Rounds[0]
		if r["samples"] < 10 || r["rssmax"] < r["rssend"] || r["rssend"] <= 0 || r["ops"] < 20_000 {
			t.Errorf("drift on %s: %v", side, r)
		}
		if _, ok := r["slope"]; !ok {
			t.Errorf("drift on %s has no slope: %v", side, r)
		}
	}
}
