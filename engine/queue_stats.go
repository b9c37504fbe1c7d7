package engine

import (
	"strings"
	"time"
)

// queueEngine is QUEUE's per-engine state (family.go): the totals and the
// wait times INFO queue reports, and the deliveries leased with
// RELEASE-ON-DISCONNECT by each client.
type queueEngine struct {
	keys                                  int
	counts                                [numJobStates]int64 // the queues' jobs by state, summed
	delivered, acked, nacked, redelivered int64
	deadLettered                          int64
	wait                                  lateWindow // ready to delivered, of the latest deliveries
	owned                                 map[int64]map[ownedJob]uint64
}

// ownedJob names a job a client holds: its database (DB.phys, which
// follows the queue through SWAPDB), key and id.
type ownedJob struct {
	db      int
	key, id string
}

var queueState = newFamilyState[queueEngine]()

func init() { registerClientHook((*Engine).releaseClientJobs) }

func (st *queueEngine) resetStats() {
	st.delivered, st.acked, st.nacked, st.redelivered, st.deadLettered = 0, 0, 0, 0, 0
	st.wait = lateWindow{}
}

func msDuration(ms int64) time.Duration { return time.Duration(ms) * time.Millisecond }

// own records that client holds a delivery it wants back in the queue if
// it disconnects.
func (st *queueEngine) own(client int64, db int, key, id string, token uint64) {
	if st.owned == nil {
		st.owned = map[int64]map[ownedJob]uint64{}
	}
	m := st.owned[client]
	if m == nil {
		m = map[ownedJob]uint64{}
		st.owned[client] = m
	}
	m[ownedJob{db, strings.Clone(key), id}] = token // key may be a view of an argument
}

// releaseOwner forgets that a client holds the job (it is settled, or its
// lease ended).
func (db *DB) releaseOwner(key []byte, n *queueNode) {
	x := n.val.ext
	if x == nil || x.owner == 0 {
		return
	}
	st := queueState.of(db.e)
	if m := st.owned[x.owner]; m != nil {
		delete(m, ownedJob{db.phys, string(key), n.key})
		if len(m) == 0 {
			delete(st.owned, x.owner)
		}
	}
	x.owner = 0
}

// releaseClientJobs puts back in the queue, at once, the jobs a client
// that disconnected leased with RELEASE-ON-DISCONNECT. One renamed since
// (or in a deleted queue) is no longer found: its lease is the backstop.
func (e *Engine) releaseClientJobs(client int64) {
	st := queueState.of(e)
	held := st.owned[client]
	delete(st.owned, client)
	for oj, token := range held {
		db := e.byPhys[oj.db]
		k := oj.key
		q, ok := db.rawObject(bytesOf(k)).(*Queue)
		if !ok {
			continue
		}
		key := bytesOf(k)
		db.advanceQueue(k, key, q)
		n := q.delivery(token, oj.id)
		if n == nil {
			continue
		}
		n.val.ext.owner, n.val.ext.consumer, n.val.ext.delivery = 0, "", 0
		q.move(n, jobReady, e.now)
		q.stats.Redelivered++
		st.redelivered++
		db.persistJob(key, n)
		db.queueDone(k, key, q)
		e.notify(NotifyModule, "queue.redeliver", db.id, key)
	}
}

// QueueStats are the figures of INFO queue.
type QueueStats struct {
	Keys                                  int
	Ready, Delayed, Inflight, Dead        int64
	Delivered, Acked, Nacked, Redelivered int64
	DeadLettered                          int64 // jobs that died (out of attempts or past their TTL)
	// Wait is how long each of the latest deliveries had been ready.
	Wait Lateness
}

// QueueStats gathers INFO queue's figures, from running totals: INFO costs
// the same with a million queues as with one.
func (e *Engine) QueueStats() QueueStats {
	st := queueState.of(e)
	return QueueStats{Keys: st.keys, Delivered: st.delivered, Acked: st.acked, Nacked: st.nacked,
		Redelivered: st.redelivered, DeadLettered: st.deadLettered, Wait: st.wait.summary(),
		Ready: st.counts[jobReady], Delayed: st.counts[jobDelayed], Inflight: st.counts[jobInflight],
		Dead: st.counts[jobDead]}
}

func (q *Queue) nativeFamily() string { return "queue" }
func (q *Queue) nativeItems() int64   { return int64(q.jobs.Len()) }
