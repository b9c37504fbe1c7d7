package console

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/revolver-db/revolver/engine"
	"github.com/revolver-db/revolver/resp"
)

// Revolver's own metrics: the persistence store's, the native families'
// totals (from INFO's family sections, taken at one instant) and the top
// keys' series.
//
// Per-key series carry labels db and key for the metrics-top-keys largest
// keys of each family (by items: timers, jobs, numbers, stored messages).
// Everything else is one more series with key="(other)" and db="": the
// family's total from INFO minus the named keys, so that a sum over key
// is the family's total. A real key may be named "(other)"; its db label
// is never empty, which tells the two apart. Figures with no meaningful
// sum (a queue's oldest ready age, a room's UV) have no "(other)" series.

// otherKey is the key label of the series that sums the keys not named.
const otherKey = "(other)"

type familyField struct {
	field, name string
	counter     bool
	help        string
	labels      []string // label names, with values in values
	values      []string
}

var stateLabel = []string{"state"}

var familyFields = map[string][]familyField{
	"persistence": {
		{"store_commits", "revolver_store_commits_total", true, "Group commits appended to the change log.", nil, nil},
		{"store_fsyncs", "revolver_store_fsyncs_total", true, "fsyncs of the change log.", nil, nil},
		{"store_records", "revolver_store_log_records_total", true, "Records appended to the change log.", nil, nil},
		{"store_applied_records", "revolver_store_applied_records_total", true, "Records applied to the store.", nil, nil},
		{"store_pending_records", "revolver_store_pending_records", false, "Records accepted, not yet in the change log.", nil, nil},
		{"store_apply_lag_records", "revolver_store_apply_lag_records", false, "Records in the change log not yet applied to the store.", nil, nil},
		{"store_apply_lag_bytes", "revolver_store_apply_lag_bytes", false, "Bytes of the change log not yet applied to the store.", nil, nil},
		{"store_memory", "revolver_store_memory_bytes", false, "Memory the store holds for recent writes.", nil, nil},
		{"store_memtables", "revolver_store_memtables_bytes", false, "Memory of the store's memtables (part of store_memory).", nil, nil},
		{"store_max_memory", "revolver_store_max_memory_bytes", false, "The cap on the store's memory (persistence-max-memory).", nil, nil},
		{"rdb_saves", "revolver_saves_total", true, "Saves (checkpoints) made.", nil, nil},
	},
	"stats": {
		{"console_engine_read_max_usec", "revolver_console_engine_read_max_seconds", false, "The longest hold of the engine lock by the console's own reads.", nil, nil},
		{"console_engine_reads", "revolver_console_engine_reads_total", true, "The console's own reads of the engine.", nil, nil},
	},
	"delay": {
		{"delay_keys", "revolver_delay_keys", false, "DELAY keys.", nil, nil},
		{"delay_timers_pending", "revolver_delay_timers", false, "Timers, by state (pending: waiting for their time or a pop; leased: popped, not yet acked).", stateLabel, []string{"pending"}},
		{"delay_timers_leased", "revolver_delay_timers", false, "", stateLabel, []string{"leased"}},
		{"delay_fired", "revolver_delay_fired_total", true, "Timers delivered by pops, redeliveries included.", nil, nil},
		{"delay_redelivered", "revolver_delay_redelivered_total", true, "Deliveries of a timer whose lease ran out.", nil, nil},
		{"delay_acked", "revolver_delay_acked_total", true, "Leases settled by DELAY.ACK.", nil, nil},
	},
	"queue": {
		{"queue_keys", "revolver_queue_keys", false, "QUEUE keys.", nil, nil},
		{"queue_jobs_ready", "revolver_queue_jobs", false, "Jobs, by state.", stateLabel, []string{"ready"}},
		{"queue_jobs_delayed", "revolver_queue_jobs", false, "", stateLabel, []string{"delayed"}},
		{"queue_jobs_inflight", "revolver_queue_jobs", false, "", stateLabel, []string{"inflight"}},
		{"queue_jobs_dead", "revolver_queue_jobs", false, "", stateLabel, []string{"dead"}},
		{"queue_delivered", "revolver_queue_delivered_total", true, "Jobs delivered, redeliveries included.", nil, nil},
		{"queue_acked", "revolver_queue_acked_total", true, "Deliveries acked.", nil, nil},
		{"queue_nacked", "revolver_queue_nacked_total", true, "Deliveries nacked.", nil, nil},
		{"queue_redelivered", "revolver_queue_redelivered_total", true, "Jobs made ready again after a lease ran out or their client left.", nil, nil},
		{"queue_dead_lettered", "revolver_queue_dead_lettered_total", true, "Jobs that died: out of attempts or past their TTL.", nil, nil},
	},
	"numpool": {
		{"numpool_keys", "revolver_numpool_keys", false, "NUMPOOL keys.", nil, nil},
		{"numpool_idle_up", "revolver_numpool_numbers", false, "Numbers, by state.", stateLabel, []string{"idle_up"}},
		{"numpool_idle_down", "revolver_numpool_numbers", false, "", stateLabel, []string{"idle_down"}},
		{"numpool_busy_up", "revolver_numpool_numbers", false, "", stateLabel, []string{"busy_up"}},
		{"numpool_busy_down", "revolver_numpool_numbers", false, "", stateLabel, []string{"busy_down"}},
		{"numpool_calls", "revolver_numpool_calls_total", true, "Calls that took a number.", nil, nil},
		{"numpool_hangups", "revolver_numpool_hangups_total", true, "Explicit hangups.", nil, nil},
		{"numpool_lease_hangups", "revolver_numpool_lease_hangups_total", true, "Calls a lease hung up.", nil, nil},
		{"numpool_calls_none_free", "revolver_numpool_calls_none_free_total", true, "Calls that found no number free.", nil, nil},
	},
	"room": {
		{"room_keys", "revolver_room_keys", false, "ROOM keys.", nil, nil},
		{"room_online", "revolver_room_online", false, "Users online, every room summed.", nil, nil},
		{"room_messages", "revolver_room_messages", false, "Messages stored, normal and important, every room summed.", nil, nil},
		{"room_pullers", "revolver_room_pullers", false, "Clients blocked in ROOM.PULL.", nil, nil},
		{"room_heartbeats", "revolver_room_heartbeats_total", true, "Users in heartbeats.", nil, nil},
		{"room_published", "revolver_room_published_total", true, "Messages published.", nil, nil},
		{"room_published_important", "revolver_room_published_important_total", true, "Important messages published.", nil, nil},
		{"room_pulls", "revolver_room_pulls_total", true, "Pulls answered.", nil, nil},
		{"room_delivered", "revolver_room_delivered_total", true, "Messages delivered by pulls.", nil, nil},
		{"room_pulls_with_gap", "revolver_room_pulls_with_gap_total", true, "Pulls that missed messages already gone.", nil, nil},
		{"room_pulls_held", "revolver_room_pulls_held_total", true, "Pulls flow control held.", nil, nil},
		{"room_replies_saved", "revolver_room_replies_saved_total", true, "Replies flow control saved.", nil, nil},
	},
}

// familySections are the sections of familyFields, in exposition order.
var familySections = []string{"persistence", "stats", "delay", "queue", "numpool", "room"}

// persistenceMetrics and familyMetrics add Revolver's own totals.
func persistenceMetrics(o *metricsOut, info map[string]map[string]string) {
	sectionMetrics(o, info, "persistence")
	sectionMetrics(o, info, "stats")
}

func familyMetrics(o *metricsOut, info map[string]map[string]string, late engine.Histogram) {
	for _, sec := range familySections[2:] {
		sectionMetrics(o, info, sec)
	}
	o.histogram("revolver_delay_late_seconds",
		"How long after its due time (or its lease's end) each timer was delivered.", late)
	// The latest deliveries' waits, as INFO gives them (a window of the
	// latest 1024, not a histogram).
	for _, q := range []struct{ field, quantile string }{
		{"queue_wait_p50_usec", "0.5"}, {"queue_wait_p99_usec", "0.99"}, {"queue_wait_max_usec", "1"},
	} {
		if v, ok := infoFloat(info["queue"], q.field); ok {
			o.add("revolver_queue_wait_recent_seconds",
				"How long the latest deliveries had been ready: quantiles of the latest 1024.",
				prometheus.GaugeValue, v/1e6, []string{"quantile"}, q.quantile)
		}
	}
}

func sectionMetrics(o *metricsOut, info map[string]map[string]string, sec string) {
	for _, f := range familyFields[sec] {
		v, ok := infoFloat(info[sec], f.field)
		if !ok {
			continue
		}
		if f.field == "console_engine_read_max_usec" {
			v /= 1e6
		}
		help := f.help
		if help == "" {
			help = helpOf(sec, f.name)
		}
		vt := prometheus.GaugeValue
		if f.counter {
			vt = prometheus.CounterValue
		}
		o.add(f.name, help, vt, v, f.labels, f.values...)
	}
}

// helpOf is the help text of a metric another field of the section named
// first (every series of a metric must carry the same).
func helpOf(sec, name string) string {
	for _, f := range familyFields[sec] {
		if f.name == name && f.help != "" {
			return f.help
		}
	}
	return ""
}

// keySeries is one per-key metric of a family: how to read it from the
// key's command reply, and the INFO field its "(other)" series is the rest
// of ("" for none).
type keySeries struct {
	name, help string
	state      string // the state label's value, "" for none
	reply      string // the field of the key's reply; "" for an integer reply
	scale      float64
	total      []string // INFO fields summed for the family's total
}

var keySeriesByFamily = map[string][]keySeries{
	"delay": {
		{"revolver_delay_key_timers", "Timers of the largest DELAY keys (leased included); key=\"(other)\" sums the rest.", "", "", 1,
			[]string{"delay_timers_pending", "delay_timers_leased"}},
	},
	"queue": {
		{"revolver_queue_key_jobs", "Jobs of the largest QUEUE keys, by state; key=\"(other)\" sums the rest.", "ready", "ready", 1, []string{"queue_jobs_ready"}},
		{"revolver_queue_key_jobs", "", "delayed", "delayed", 1, []string{"queue_jobs_delayed"}},
		{"revolver_queue_key_jobs", "", "inflight", "inflight", 1, []string{"queue_jobs_inflight"}},
		{"revolver_queue_key_jobs", "", "dead", "dead", 1, []string{"queue_jobs_dead"}},
		{"revolver_queue_key_oldest_ready_age_seconds", "How long the oldest ready job of each of the largest QUEUE keys has waited.", "", "oldest-ready-age", 1e-3, nil},
	},
	"numpool": {
		{"revolver_numpool_key_numbers", "Numbers of the largest NUMPOOL keys, by state; key=\"(other)\" sums the rest.", "idle_up", "idle+up", 1, []string{"numpool_idle_up"}},
		{"revolver_numpool_key_numbers", "", "idle_down", "idle+down", 1, []string{"numpool_idle_down"}},
		{"revolver_numpool_key_numbers", "", "busy_up", "busy+up", 1, []string{"numpool_busy_up"}},
		{"revolver_numpool_key_numbers", "", "busy_down", "busy+down", 1, []string{"numpool_busy_down"}},
	},
	"room": {
		{"revolver_room_key_online", "Users online in the largest ROOM keys; key=\"(other)\" sums the rest.", "", "online", 1, []string{"room_online"}},
		{"revolver_room_key_messages", "Messages stored (normal and important) in the largest ROOM keys; key=\"(other)\" sums the rest.", "", "messages+important", 1, []string{"room_messages"}},
		{"revolver_room_key_pullers", "Clients blocked in ROOM.PULL on the largest ROOM keys; key=\"(other)\" sums the rest.", "", "pullers", 1, []string{"room_pullers"}},
		{"revolver_room_key_uv", "Unique visitors of the largest ROOM keys.", "", "uv", 1, nil},
	},
}

// keyMetrics adds the top keys' series from their commands' replies (one
// per plan entry), and each family's "(other)" series.
func keyMetrics(o *metricsOut, info map[string]map[string]string, plan []keyCommand, replies []resp.Value) {
	sums := map[string]map[int]float64{} // family -> series index -> sum of named keys
	selected := false
	for i, p := range plan {
		if i >= len(replies) {
			break
		}
		v := replies[i]
		if p.selDB {
			selected = v.Kind != resp.KindError
			continue
		}
		if !selected || v.Kind == resp.KindError || v.Kind == resp.KindNull {
			continue // refused (ACL), gone, or of another type by now
		}
		var fields map[string]string
		if v.Kind != resp.KindInt {
			var ok bool
			if fields, ok = replyPairs(v); !ok {
				continue
			}
		}
		db := strconv.Itoa(p.key.DB)
		if sums[p.family] == nil {
			sums[p.family] = map[int]float64{}
		}
		for si, ks := range keySeriesByFamily[p.family] {
			x, ok := keyFigure(v, fields, ks.reply)
			if !ok {
				continue
			}
			x *= ks.scale
			sums[p.family][si] += x
			addKeySeries(o, p.family, ks, x, db, p.key.Key)
		}
	}
	for _, fam := range familySections[2:] {
		sec, ok := info[fam]
		if !ok {
			continue
		}
		for si, ks := range keySeriesByFamily[fam] {
			if ks.total == nil {
				continue
			}
			total := 0.0
			for _, f := range ks.total {
				v, _ := infoFloat(sec, f)
				total += v
			}
			addKeySeries(o, fam, ks, max(total-sums[fam][si], 0), "", otherKey)
		}
	}
}

// keyFigure reads a field of a key's reply; "a+b" sums two fields, "" is
// an integer reply.
func keyFigure(v resp.Value, fields map[string]string, field string) (float64, bool) {
	if field == "" {
		return float64(v.Int), v.Kind == resp.KindInt
	}
	if fields == nil {
		return 0, false
	}
	total := 0.0
	for _, f := range splitPlus(field) {
		s, ok := fields[f]
		if !ok {
			return 0, false
		}
		x, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return 0, false
		}
		total += x
	}
	return total, true
}

// splitPlus splits "messages+important" but keeps NUMPOOL's state names
// ("idle+up") whole.
func splitPlus(field string) []string {
	if field == "messages+important" {
		return []string{"messages", "important"}
	}
	return []string{field}
}

func addKeySeries(o *metricsOut, fam string, ks keySeries, v float64, db, key string) {
	help := ks.help
	if help == "" {
		for _, x := range keySeriesByFamily[fam] {
			if x.name == ks.name && x.help != "" {
				help = x.help
				break
			}
		}
	}
	if ks.state != "" {
		o.add(ks.name, help, prometheus.GaugeValue, v, []string{"db", "key", "state"}, db, key, ks.state)
		return
	}
	o.add(ks.name, help, prometheus.GaugeValue, v, []string{"db", "key"}, db, key)
}
