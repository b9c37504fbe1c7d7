package console

import (
	"maps"
	"net/http"
	"sort"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/revolver-db/revolver/engine"
	"github.com/revolver-db/revolver/resp"
)

// GET /metrics: Prometheus's text format. One scrape is one session: the
// top keys are found by a chunked walk (metrics_walk.go), then one
// pipeline sends INFO (by sections) and the top keys' own commands, so the
// figures are as close to one instant as commands allow and each command
// holds the engine lock only for itself. The server's INFO fields keep
// the names redis_exporter gives them (metrics_info.go), so dashboards
// made for Redis work; Revolver's own figures are revolver_*
// (metrics_family.go). The metrics are made anew for each scrape in a
// private registry: no global registry, and no go_* or process_*
// collectors (redis_exporter's users do not expect them, and the server's
// memory and CPU are already redis_memory_* and redis_cpu_*).

// PersistenceMetrics are the store's figures INFO does not give.
type PersistenceMetrics struct {
	LogBytes uint64           // bytes appended to the change log
	Fsync    engine.Histogram // the change log's fsync latencies
}

// metricsBackend is what /metrics needs of the server beyond Backend; a
// backend without it has no persistence metrics.
type metricsBackend interface {
	// Persistence returns the store's figures, false when persistence is
	// off.
	Persistence() (PersistenceMetrics, bool)
}

// metricsCollector hands a scrape's metrics, made beforehand, to the
// registry. It is unchecked (Describe sends nothing): the series depend on
// the server's state; the registry still checks them for consistency.
type metricsCollector struct{ ms []prometheus.Metric }

func (m *metricsCollector) Describe(chan<- *prometheus.Desc) {}

func (m *metricsCollector) Collect(ch chan<- prometheus.Metric) {
	for _, x := range m.ms {
		ch <- x
	}
}

// metricsOut accumulates a scrape's metrics.
type metricsOut struct {
	ms    []prometheus.Metric
	descs map[string]*prometheus.Desc
}

func (o *metricsOut) desc(name, help string, labels []string) *prometheus.Desc {
	if d, ok := o.descs[name]; ok {
		return d
	}
	if o.descs == nil {
		o.descs = map[string]*prometheus.Desc{}
	}
	d := prometheus.NewDesc(name, help, labels, nil)
	o.descs[name] = d
	return d
}

func (o *metricsOut) add(name, help string, vt prometheus.ValueType, v float64, labels []string, values ...string) {
	m, err := prometheus.NewConstMetric(o.desc(name, help, labels), vt, v, values...)
	if err == nil {
		o.ms = append(o.ms, m)
	}
}

func (o *metricsOut) gauge(name, help string, v float64) {
	o.add(name, help, prometheus.GaugeValue, v, nil)
}

func (o *metricsOut) counter(name, help string, v float64) {
	o.add(name, help, prometheus.CounterValue, v, nil)
}

func (o *metricsOut) histogram(name, help string, h engine.Histogram) {
	buckets := make(map[float64]uint64, len(h.Bounds))
	for i, b := range h.Bounds {
		buckets[b] = h.Cumulative[i]
	}
	m, err := prometheus.NewConstHistogram(o.desc(name, help, nil), h.Count, h.Sum, buckets)
	if err == nil {
		o.ms = append(o.ms, m)
	}
}

// metricsInfoCommands read every INFO section a scrape needs. INFO runs
// under the engine lock, and some sections cost more than others (each
// family's visits its native keys; commandstats and latencystats every
// command): as separate commands the lock is let go between them, so a
// scrape holds it no longer than its costliest section.
var metricsInfoCommands = [][]string{
	{"INFO", "server", "clients", "memory", "persistence", "stats", "replication", "cpu", "errorstats", "keyspace"},
	{"INFO", "commandstats"},
	{"INFO", "latencystats"},
	{"INFO", "delay"},
	{"INFO", "queue"},
	{"INFO", "numpool"},
	{"INFO", "room"},
}

// metricsScrapeTimeout bounds a scrape's walk of the native keys; past it
// the top keys are those seen so far.
const metricsScrapeTimeout = 5 * time.Second

// metricsHandler serves GET /metrics.
func (c *Console) metricsHandler() http.Handler { return http.HandlerFunc(c.metrics) }

// metrics is GET /metrics.
func (c *Console) metrics(w http.ResponseWriter, r *http.Request) {
	s, err := c.open(r)
	if err != nil {
		c.refuse(w, err)
		return
	}
	defer s.close()
	t0 := time.Now()
	n := c.options().TopKeys
	var top map[string][]engine.NativeKey
	if n > 0 {
		top = topNativeKeys(c.b, n, time.Now().Add(metricsScrapeTimeout))
	}
	cmds := append([][]string(nil), metricsInfoCommands...)
	plan := planKeyCommands(top)
	for _, p := range plan {
		cmds = append(cmds, p.args)
	}
	replies, err := s.pipeline(cmds...)
	if err != nil {
		c.refuse(w, err)
		return
	}
	info := map[string]map[string]string{}
	for _, v := range replies[:len(metricsInfoCommands)] {
		if err := errorReply(v); err != nil {
			c.refuse(w, err)
			return
		}
		maps.Copy(info, parseInfo(v.Str))
	}
	var out metricsOut
	out.gauge("redis_up", "Whether the server answered the scrape's INFO.", 1)
	infoMetrics(&out, info)
	persistenceMetrics(&out, info)
	if mb, ok := c.b.(metricsBackend); ok {
		if pm, ok := mb.Persistence(); ok {
			out.counter("revolver_store_log_bytes_total", "Bytes appended to the change log.", float64(pm.LogBytes))
			out.histogram("revolver_store_fsync_duration_seconds", "How long the change log's fsyncs took.", pm.Fsync)
		}
	}
	var late engine.LateCounts
	dbs := 0
	c.b.View(func(e *engine.Engine) { late, dbs = e.DelayLateHistogram(), e.Databases() })
	emptyDatabases(&out, info["keyspace"], dbs)
	familyMetrics(&out, info, late.Histogram())
	keyMetrics(&out, info, plan, replies[len(metricsInfoCommands):])
	out.gauge("revolver_scrape_duration_seconds", "How long this scrape took to gather its figures.",
		time.Since(t0).Seconds())
	reg := prometheus.NewRegistry()
	reg.MustRegister(&metricsCollector{out.ms})
	w.Header().Set("Cache-Control", "no-store")
	promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError}).ServeHTTP(w, r)
}

// infoFloat reads an INFO field as a number; ok is false when it is
// absent or not a number.
func infoFloat(sec map[string]string, field string) (float64, bool) {
	v, ok := sec[field]
	if !ok {
		return 0, false
	}
	f, err := strconv.ParseFloat(v, 64)
	return f, err == nil
}

// sortedKeys returns a map's keys in order, for a stable exposition.
func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// replyPairs reads a per-key command's reply of pairs (QUEUE.STATS,
// ROOM.INFO, NUMPOOL.INFO); ok is false for an error reply or a nil.
func replyPairs(v resp.Value) (map[string]string, bool) {
	if v.Kind != resp.KindArray && v.Kind != resp.KindMap {
		return nil, false
	}
	m := map[string]string{}
	for i := 0; i+1 < len(v.Elems); i += 2 {
		if v.Elems[i+1].Kind == resp.KindArray || v.Elems[i+1].Kind == resp.KindMap {
			continue // NUMPOOL.INFO's tags
		}
		m[v.Elems[i].Str] = text(v.Elems[i+1])
	}
	return m, true
}
