package tests

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/revolver-db/revolver/resp"
	"github.com/revolver-db/revolver/server"
)

// Black-box tests of the console's GET /metrics (issue 35): the exposition
// parsed as Prometheus would, its figures checked against INFO taken right
// before and after the scrape.

// startMetricsConsole runs a server with its console on.
func startMetricsConsole(t *testing.T, opts ...serverOpt) (*server.Server, string) {
	t.Helper()
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	srv := startServer(t, append([]serverOpt{withConfig("http-port", strconv.Itoa(port))}, opts...)...)
	addr := srv.HTTPAddr()
	if addr == "" {
		t.Fatal("the console does not listen")
	}
	return srv, addr
}

// scrapeMetricsAs GETs /metrics with auth applied by auth (nil: none) and returns
// the status and the body.
func scrapeMetricsAs(t *testing.T, addr string, auth func(*http.Request)) (int, string) {
	t.Helper()
	req, err := http.NewRequest("GET", "http://"+addr+"/metrics", nil)
	if err != nil {
		t.Fatal(err)
	}
	if auth != nil {
		auth(req)
	}
	cl := &http.Client{Timeout: 20 * time.Second}
	res, err := cl.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, string(body)
}

// scrapeMetrics GETs /metrics and parses it.
func scrapeMetrics(t *testing.T, addr string, auth func(*http.Request)) map[string]*dto.MetricFamily {
	t.Helper()
	code, body := scrapeMetricsAs(t, addr, auth)
	if code != http.StatusOK {
		t.Fatalf("GET /metrics: %d %s", code, body)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("parsing the exposition: %v\n%s", err, body)
	}
	return mfs
}

// metricValue is a metric's value for the labels given as "name=value" pairs
// (the series must have exactly those labels); ok is false when absent.
func metricValue(mfs map[string]*dto.MetricFamily, name string, labels ...string) (float64, bool) {
	mf := mfs[name]
	if mf == nil {
		return 0, false
	}
next:
	for _, m := range mf.GetMetric() {
		if len(m.GetLabel()) != len(labels) {
			continue
		}
		for _, l := range labels {
			k, v, _ := strings.Cut(l, "=")
			found := false
			for _, lp := range m.GetLabel() {
				if lp.GetName() == k && lp.GetValue() == v {
					found = true
				}
			}
			if !found {
				continue next
			}
		}
		switch mf.GetType() {
		case dto.MetricType_COUNTER:
			return m.GetCounter().GetValue(), true
		case dto.MetricType_GAUGE:
			return m.GetGauge().GetValue(), true
		case dto.MetricType_HISTOGRAM:
			return float64(m.GetHistogram().GetSampleCount()), true
		case dto.MetricType_SUMMARY:
			return float64(m.GetSummary().GetSampleCount()), true
		}
	}
	return 0, false
}

func mustMetric(t *testing.T, mfs map[string]*dto.MetricFamily, name string, labels ...string) float64 {
	t.Helper()
	v, ok := metricValue(mfs, name, labels...)
	if !ok {
		t.Fatalf("no series %s%v", name, labels)
	}
	return v
}

// metricsInfo runs INFO everything and returns its fields (sections merged).
func metricsInfo(t *testing.T, c *rawConn) map[string]string {
	t.Helper()
	v := c.do("INFO", "everything")
	if v.Kind == resp.KindError {
		t.Fatalf("INFO: %s", v.Str)
	}
	out := map[string]string{}
	for line := range strings.SplitSeq(v.Str, "\r\n") {
		if k, val, ok := strings.Cut(line, ":"); ok && !strings.HasPrefix(line, "#") {
			out[k] = val
		}
	}
	return out
}

func metricsInfoNum(t *testing.T, info map[string]string, field string) float64 {
	t.Helper()
	f, err := strconv.ParseFloat(info[field], 64)
	if err != nil {
		t.Fatalf("INFO %s = %q", field, info[field])
	}
	return f
}

func metricsMustOK(t *testing.T, c *rawConn, args ...string) resp.Value {
	t.Helper()
	v := c.do(args...)
	if v.Kind == resp.KindError {
		t.Fatalf("%v: %s", args, v.Str)
	}
	return v
}

// metricsFamilyFixture makes timers (one delivered late), jobs ready, in flight
// and dead, a pool of numbers and a room with users and a message.
func metricsFamilyFixture(t *testing.T, c *rawConn) {
	t.Helper()
	metricsMustOK(t, c, "DELAY.ADD", "d1", "later", "IN", "100000")
	metricsMustOK(t, c, "DELAY.ADD", "d1", "now", "IN", "0")
	metricsMustOK(t, c, "DELAY.ADD", "d2", "x", "IN", "100000")
	if v := metricsMustOK(t, c, "DELAY.POP", "d1"); len(v.Elems) != 1 {
		t.Fatalf("DELAY.POP: %v", v)
	}
	metricsMustOK(t, c, "QUEUE.PUSH", "qa", "x", "ID", "x1", "MAXATTEMPTS", "1")
	metricsMustOK(t, c, "QUEUE.PUSH", "qa", "y", "ID", "y1")
	metricsMustOK(t, c, "QUEUE.PUSH", "qa", "z", "ID", "z1")
	got := metricsMustOK(t, c, "QUEUE.POPACK", "qa", "c1", "LEASE", "60000")
	if len(got.Elems) != 1 || len(got.Elems[0].Elems) < 4 {
		t.Fatalf("QUEUE.POPACK: %v", got)
	}
	metricsMustOK(t, c, "QUEUE.NACK", "qa", got.Elems[0].Elems[3].Str) // x1 is out of attempts: dead
	metricsMustOK(t, c, "QUEUE.POPACK", "qa", "c2", "LEASE", "60000")  // y1 in flight, z1 ready
	metricsMustOK(t, c, "QUEUE.PUSH", "qb", "w")
	metricsMustOK(t, c, "NUMPOOL.EVENT", "p", "add", "1001")
	metricsMustOK(t, c, "NUMPOOL.EVENT", "p", "add", "1002")
	metricsMustOK(t, c, "NUMPOOL.EVENT", "p", "reg", "1001")
	metricsMustOK(t, c, "ROOM.HEARTBEAT", "r", "u1", "u2")
	metricsMustOK(t, c, "ROOM.PUB", "r", "hello")
}

// TestConsoleMetricsMatchInfo scrapes a server holding every family and
// checks names, types and values against INFO.
func TestConsoleMetricsMatchInfo(t *testing.T) {
	srv, addr := startMetricsConsole(t, withPersistence(t.TempDir()), withConfig("appendfsync", "always"))
	c := dialRaw(t, srv.Addr())
	metricsFamilyFixture(t, c)
	for i := range 20 {
		metricsMustOK(t, c, "SET", fmt.Sprint("k", i), "v")
	}
	metricsMustOK(t, c, "EXPIRE", "k0", "1000")
	c.do("GET", "k0")
	c.do("GET", "missing")
	c.do("NOSUCHCOMMAND")

	before := metricsInfo(t, c)
	mfs := scrapeMetrics(t, addr, nil)
	after := metricsInfo(t, c)

	types := map[string]dto.MetricType{
		"redis_up":                                    dto.MetricType_GAUGE,
		"redis_uptime_in_seconds":                     dto.MetricType_GAUGE,
		"redis_connected_clients":                     dto.MetricType_GAUGE,
		"redis_blocked_clients":                       dto.MetricType_GAUGE,
		"redis_commands_processed_total":              dto.MetricType_COUNTER,
		"redis_connections_received_total":            dto.MetricType_COUNTER,
		"redis_rejected_connections_total":            dto.MetricType_COUNTER,
		"redis_memory_used_bytes":                     dto.MetricType_GAUGE,
		"redis_memory_used_rss_bytes":                 dto.MetricType_GAUGE,
		"redis_memory_max_bytes":                      dto.MetricType_GAUGE,
		"redis_keyspace_hits_total":                   dto.MetricType_COUNTER,
		"redis_keyspace_misses_total":                 dto.MetricType_COUNTER,
		"redis_expired_keys_total":                    dto.MetricType_COUNTER,
		"redis_evicted_keys_total":                    dto.MetricType_COUNTER,
		"redis_net_input_bytes_total":                 dto.MetricType_COUNTER,
		"redis_net_output_bytes_total":                dto.MetricType_COUNTER,
		"redis_db_keys":                               dto.MetricType_GAUGE,
		"redis_db_keys_expiring":                      dto.MetricType_GAUGE,
		"redis_commands_total":                        dto.MetricType_COUNTER,
		"redis_commands_duration_seconds_total":       dto.MetricType_COUNTER,
		"redis_commands_failed_calls_total":           dto.MetricType_COUNTER,
		"redis_commands_rejected_calls_total":         dto.MetricType_COUNTER,
		"redis_latency_percentiles_usec":              dto.MetricType_SUMMARY,
		"redis_instance_info":                         dto.MetricType_GAUGE,
		"redis_connected_slaves":                      dto.MetricType_GAUGE,
		"redis_master_repl_offset":                    dto.MetricType_GAUGE,
		"redis_rdb_last_save_timestamp_seconds":       dto.MetricType_GAUGE,
		"redis_rdb_changes_since_last_save":           dto.MetricType_GAUGE,
		"redis_aof_enabled":                           dto.MetricType_GAUGE,
		"redis_errors_total":                          dto.MetricType_COUNTER,
		"revolver_store_log_bytes_total":              dto.MetricType_COUNTER,
		"revolver_store_apply_lag_bytes":              dto.MetricType_GAUGE,
		"revolver_store_apply_lag_records":            dto.MetricType_GAUGE,
		"revolver_store_memory_bytes":                 dto.MetricType_GAUGE,
		"revolver_store_fsync_duration_seconds":       dto.MetricType_HISTOGRAM,
		"revolver_delay_timers":                       dto.MetricType_GAUGE,
		"revolver_delay_fired_total":                  dto.MetricType_COUNTER,
		"revolver_delay_late_seconds":                 dto.MetricType_HISTOGRAM,
		"revolver_queue_jobs":                         dto.MetricType_GAUGE,
		"revolver_queue_dead_lettered_total":          dto.MetricType_COUNTER,
		"revolver_queue_key_oldest_ready_age_seconds": dto.MetricType_GAUGE,
		"revolver_numpool_numbers":                    dto.MetricType_GAUGE,
		"revolver_room_online":                        dto.MetricType_GAUGE,
		"revolver_room_key_uv":                        dto.MetricType_GAUGE,
		"revolver_room_pullers":                       dto.MetricType_GAUGE,
		"revolver_room_pulls_held_total":              dto.MetricType_COUNTER,
		"revolver_room_published_total":               dto.MetricType_COUNTER,
	}
	for name, want := range types {
		mf := mfs[name]
		if mf == nil {
			t.Errorf("no metric %s", name)
			continue
		}
		if mf.GetType() != want {
			t.Errorf("%s is a %v, want a %v", name, mf.GetType(), want)
		}
	}
	doc, err := os.ReadFile("../docs/metrics.md")
	if err != nil {
		t.Fatal(err)
	}
	for name := range mfs {
		if strings.HasPrefix(name, "go_") || strings.HasPrefix(name, "process_") {
			t.Errorf("unexpected runtime metric %s", name)
		}
		if !strings.Contains(string(doc), "`"+name+"`") {
			t.Errorf("%s is not in docs/metrics.md", name)
		}
	}

	// Figures the scrape cannot change: equal to INFO's.
	equal := []struct {
		field, name string
		labels      []string
	}{
		{"expired_keys", "redis_expired_keys_total", nil},
		{"evicted_keys", "redis_evicted_keys_total", nil},
		{"maxmemory", "redis_memory_max_bytes", nil},
		{"connected_slaves", "redis_connected_slaves", nil},
		{"delay_timers_pending", "revolver_delay_timers", []string{"state=pending"}},
		{"delay_timers_leased", "revolver_delay_timers", []string{"state=leased"}},
		{"delay_fired", "revolver_delay_fired_total", nil},
		{"queue_jobs_ready", "revolver_queue_jobs", []string{"state=ready"}},
		{"queue_jobs_inflight", "revolver_queue_jobs", []string{"state=inflight"}},
		{"queue_jobs_dead", "revolver_queue_jobs", []string{"state=dead"}},
		{"queue_dead_lettered", "revolver_queue_dead_lettered_total", nil},
		{"queue_nacked", "revolver_queue_nacked_total", nil},
		{"numpool_idle_up", "revolver_numpool_numbers", []string{"state=idle_up"}},
		{"numpool_idle_down", "revolver_numpool_numbers", []string{"state=idle_down"}},
		{"room_online", "revolver_room_online", nil},
		{"room_messages", "revolver_room_messages", nil},
		{"room_published", "revolver_room_published_total", nil},
	}
	for _, e := range equal {
		want := metricsInfoNum(t, before, e.field)
		if got := mustMetric(t, mfs, e.name, e.labels...); got != want {
			t.Errorf("%s%v = %v, INFO %s = %v", e.name, e.labels, got, e.field, want)
		}
	}
	// Counters the scrape's own commands move: between the two INFOs.
	between := []struct{ field, name string }{
		{"total_commands_processed", "redis_commands_processed_total"},
		{"total_connections_received", "redis_connections_received_total"},
		{"keyspace_hits", "redis_keyspace_hits_total"},
		{"keyspace_misses", "redis_keyspace_misses_total"},
		{"total_net_input_bytes", "redis_net_input_bytes_total"},
		{"store_records", "revolver_store_log_records_total"},
		{"store_fsyncs", "revolver_store_fsyncs_total"},
	}
	for _, b := range between {
		lo, hi := metricsInfoNum(t, before, b.field), metricsInfoNum(t, after, b.field)
		if got := mustMetric(t, mfs, b.name); got < lo || got > hi {
			t.Errorf("%s = %v, INFO %s went from %v to %v", b.name, got, b.field, lo, hi)
		}
	}
	if got := mustMetric(t, mfs, "redis_db_keys", "db=db0"); got != 26 {
		t.Errorf("redis_db_keys{db0} = %v, want 26 (20 strings, 6 native keys)", got)
	}
	if got, ok := metricValue(mfs, "redis_db_keys", "db=db15"); !ok || got != 0 {
		t.Errorf("redis_db_keys{db15} = %v, %v: an empty database has its zero", got, ok)
	}
	if got := mustMetric(t, mfs, "redis_db_keys_expiring", "db=db0"); got != 1 {
		t.Errorf("redis_db_keys_expiring{db0} = %v, want 1", got)
	}
	if got := mustMetric(t, mfs, "redis_commands_total", "cmd=set"); got != 20 {
		t.Errorf("redis_commands_total{set} = %v, want 20", got)
	}
	if got := mustMetric(t, mfs, "redis_latency_percentiles_usec", "cmd=set"); got != 20 {
		t.Errorf("redis_latency_percentiles_usec{set} counts %v calls, want 20", got)
	}
	if got := mustMetric(t, mfs, "redis_errors_total", "err=ERR"); got < 1 {
		t.Errorf("redis_errors_total{ERR} = %v, want the unknown command counted", got)
	}
	if got := mustMetric(t, mfs, "redis_aof_enabled"); got != 1 {
		t.Errorf("redis_aof_enabled = %v with persistence on", got)
	}
	if got := mustMetric(t, mfs, "redis_up"); got != 1 {
		t.Errorf("redis_up = %v", got)
	}
	info := mfs["redis_instance_info"].GetMetric()[0]
	labels := map[string]string{}
	for _, l := range info.GetLabel() {
		labels[l.GetName()] = l.GetValue()
	}
	if labels["redis_version"] != before["redis_version"] || labels["role"] != "master" ||
		labels["run_id"] != before["run_id"] {
		t.Errorf("redis_instance_info labels %v", labels)
	}

	// Histograms: DELAY's late-by counted the one delivery; the change
	// log's fsyncs (appendfsync always) are all timed.
	if got := mustMetric(t, mfs, "revolver_delay_late_seconds"); got != 1 {
		t.Errorf("revolver_delay_late_seconds counts %v deliveries, want 1", got)
	}
	checkMetricBuckets(t, mfs["revolver_delay_late_seconds"])
	fsyncs := mustMetric(t, mfs, "revolver_store_fsync_duration_seconds")
	if lo, hi := metricsInfoNum(t, before, "store_fsyncs"), metricsInfoNum(t, after, "store_fsyncs"); fsyncs < lo || fsyncs > hi || fsyncs == 0 {
		t.Errorf("the fsync histogram counts %v, INFO store_fsyncs went from %v to %v", fsyncs, lo, hi)
	}
	checkMetricBuckets(t, mfs["revolver_store_fsync_duration_seconds"])

	// Per-key series (metrics-top-keys 10: every key is named), with an
	// "(other)" series of zero.
	keyed := []struct {
		name   string
		labels []string
		want   float64
	}{
		{"revolver_delay_key_timers", []string{"db=0", "key=d1"}, 1},
		{"revolver_delay_key_timers", []string{"db=0", "key=d2"}, 1},
		{"revolver_delay_key_timers", []string{"db=", "key=(other)"}, 0},
		{"revolver_queue_key_jobs", []string{"db=0", "key=qa", "state=ready"}, 1},
		{"revolver_queue_key_jobs", []string{"db=0", "key=qa", "state=inflight"}, 1},
		{"revolver_queue_key_jobs", []string{"db=0", "key=qa", "state=dead"}, 1},
		{"revolver_queue_key_jobs", []string{"db=0", "key=qb", "state=ready"}, 1},
		{"revolver_queue_key_jobs", []string{"db=", "key=(other)", "state=ready"}, 0},
		{"revolver_numpool_key_numbers", []string{"db=0", "key=p", "state=idle_up"},
			metricsInfoNum(t, before, "numpool_idle_up")},
		{"revolver_room_key_online", []string{"db=0", "key=r"}, 2},
		{"revolver_room_key_messages", []string{"db=0", "key=r"}, 1},
		{"revolver_room_key_uv", []string{"db=0", "key=r"}, 2},
		{"revolver_room_key_pullers", []string{"db=0", "key=r"}, 0},
	}
	for _, k := range keyed {
		if got := mustMetric(t, mfs, k.name, k.labels...); got != k.want {
			t.Errorf("%s%v = %v, want %v", k.name, k.labels, got, k.want)
		}
	}
	if _, ok := metricValue(mfs, "revolver_queue_key_oldest_ready_age_seconds", "db=0", "key=qa"); !ok {
		t.Error("no oldest ready age for qa")
	}
}

// checkMetricBuckets checks a histogram's buckets are cumulative and end at its
// count.
func checkMetricBuckets(t *testing.T, mf *dto.MetricFamily) {
	t.Helper()
	h := mf.GetMetric()[0].GetHistogram()
	prev := uint64(0)
	for _, b := range h.GetBucket() {
		if b.GetCumulativeCount() < prev {
			t.Errorf("%s: bucket le=%v holds %d, less than the one before (%d)", mf.GetName(), b.GetUpperBound(),
				b.GetCumulativeCount(), prev)
		}
		prev = b.GetCumulativeCount()
	}
	if prev > h.GetSampleCount() {
		t.Errorf("%s: the last bucket holds %d, the count is %d", mf.GetName(), prev, h.GetSampleCount())
	}
}

// keyedMetric returns the keys a per-key metric names for a state (""
// for none), "(other)" included, with their values.
func keyedMetric(mfs map[string]*dto.MetricFamily, name, state string) map[string]float64 {
	out := map[string]float64{}
	for _, m := range mfs[name].GetMetric() {
		var key, st string
		for _, l := range m.GetLabel() {
			switch l.GetName() {
			case "key":
				key = l.GetValue()
			case "state":
				st = l.GetValue()
			}
		}
		if st == state {
			out[key] = m.GetGauge().GetValue()
		}
	}
	return out
}

// TestConsoleMetricsTopKeys: with metrics-top-keys 2 and five queues, the
// two largest are named, the rest summed as "(other)", and the series add
// up to the family's total; CONFIG SET moves the bound at once.
func TestConsoleMetricsTopKeys(t *testing.T) {
	srv, addr := startMetricsConsole(t, withConfig("metrics-top-keys", "2"))
	c := dialRaw(t, srv.Addr())
	for i := 1; i <= 5; i++ {
		for j := range i {
			metricsMustOK(t, c, "QUEUE.PUSH", fmt.Sprint("q", i), fmt.Sprint("job", j))
		}
	}
	metricsMustOK(t, c, "SELECT", "3")
	for j := range 7 {
		metricsMustOK(t, c, "QUEUE.PUSH", "big", fmt.Sprint("job", j))
	}
	mfs := scrapeMetrics(t, addr, nil)
	got := keyedMetric(mfs, "revolver_queue_key_jobs", "ready")
	want := map[string]float64{"big": 7, "q5": 5, "(other)": 1 + 2 + 3 + 4}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("ready jobs by key %v, want %v", got, want)
	}
	if db, _ := metricValue(mfs, "revolver_queue_key_jobs", "db=3", "key=big", "state=ready"); db != 7 {
		t.Errorf("big is not named in db 3")
	}
	sum := 0.0
	for _, v := range got {
		sum += v
	}
	if total := mustMetric(t, mfs, "revolver_queue_jobs", "state=ready"); sum != total || total != 22 {
		t.Errorf("the keyed series sum to %v, the total is %v (want 22)", sum, total)
	}

	for _, step := range []struct {
		n    string
		want int
	}{{"0", 0}, {"4", 4}, {"1000", 6}} {
		metricsMustOK(t, c, "CONFIG", "SET", "metrics-top-keys", step.n)
		got := keyedMetric(scrapeMetrics(t, addr, nil), "revolver_queue_key_jobs", "ready")
		if len(got) != step.want+1 || got["(other)"] != 22-sumNamedKeys(got) {
			t.Errorf("metrics-top-keys %s: %v", step.n, got)
		}
	}
	if v := c.do("CONFIG", "SET", "metrics-top-keys", "-1"); v.Kind != resp.KindError {
		t.Errorf("metrics-top-keys -1 accepted")
	}
	if v := c.do("CONFIG", "SET", "metrics-top-keys", "x"); v.Kind != resp.KindError {
		t.Errorf("metrics-top-keys x accepted")
	}
}

func sumNamedKeys(m map[string]float64) float64 {
	s := 0.0
	for k, v := range m {
		if k != "(other)" {
			s += v
		}
	}
	return s
}

// TestConsoleMetricsAuth: with requirepass, a scrape needs the password
// (basic or bearer); a user's scrape names only the keys its ACL lets it
// read.
func TestConsoleMetricsAuth(t *testing.T) {
	srv, addr := startMetricsConsole(t, withConfig("requirepass", "s3cret"))
	refused := []struct {
		what string
		auth func(*http.Request)
	}{
		{"no credentials", nil},
		{"a wrong basic password", func(r *http.Request) { r.SetBasicAuth("default", "nope") }},
		{"a wrong bearer token", func(r *http.Request) { r.Header.Set("Authorization", "Bearer nope") }},
		{"an unknown user", func(r *http.Request) { r.SetBasicAuth("nobody", "s3cret") }},
		{"an empty bearer token", func(r *http.Request) { r.Header.Set("Authorization", "Bearer ") }},
	}
	for _, r := range refused {
		code, body := scrapeMetricsAs(t, addr, r.auth)
		if code != http.StatusUnauthorized || strings.Contains(body, "redis_") {
			t.Errorf("%s: %d %q", r.what, code, body)
		}
	}
	basic := func(r *http.Request) { r.SetBasicAuth("default", "s3cret") }
	bearer := func(r *http.Request) { r.Header.Set("Authorization", "Bearer s3cret") }
	for _, auth := range []func(*http.Request){basic, bearer} {
		if got := mustMetric(t, scrapeMetrics(t, addr, auth), "redis_up"); got != 1 {
			t.Errorf("redis_up = %v", got)
		}
	}

	c := dialRaw(t, srv.Addr())
	metricsMustOK(t, c, "AUTH", "s3cret")
	metricsMustOK(t, c, "QUEUE.PUSH", "public", "x")
	metricsMustOK(t, c, "QUEUE.PUSH", "secret", "y")
	metricsMustOK(t, c, "QUEUE.PUSH", "secret", "z")
	metricsMustOK(t, c, "ACL", "SETUSER", "mon", "on", ">monpw", "+info", "+select", "+queue.stats", "~public")
	mfs := scrapeMetrics(t, addr, func(r *http.Request) { r.SetBasicAuth("mon", "monpw") })
	got := keyedMetric(mfs, "revolver_queue_key_jobs", "ready")
	if _, named := got["secret"]; named || got["public"] != 1 || got["(other)"] != 2 {
		t.Errorf("mon's scrape: %v (secret must be summed, never named)", got)
	}
	// A user that may not run INFO gets 403.
	metricsMustOK(t, c, "ACL", "SETUSER", "noinfo", "on", ">pw", "+ping")
	if code, _ := scrapeMetricsAs(t, addr, func(r *http.Request) { r.SetBasicAuth("noinfo", "pw") }); code != http.StatusForbidden {
		t.Errorf("a user without INFO: %d, want 403", code)
	}
}

// TestConsoleMetricsBadRequests: other methods are refused and nothing
// a query string says changes the scrape.
func TestConsoleMetricsBadRequests(t *testing.T) {
	_, addr := startMetricsConsole(t)
	for _, m := range []string{"POST", "PUT", "DELETE"} {
		req, _ := http.NewRequest(m, "http://"+addr+"/metrics", strings.NewReader("x=1"))
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusMethodNotAllowed {
			t.Errorf("%s /metrics: %d", m, res.StatusCode)
		}
	}
	code, body := scrapeMetricsAs(t, addr, func(r *http.Request) { r.URL.RawQuery = "name[]=%zz&collect=all" })
	if code != http.StatusOK || !strings.Contains(body, "redis_up 1") {
		t.Errorf("a query string: %d", code)
	}
}
