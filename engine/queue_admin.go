package engine

// The QUEUE commands that inspect and manage a queue rather than move work
// through it: dead letters, PEEK, INFLIGHT, GET, STATS, LEN, CONFIG, PAUSE.

// QueueJob is a job as the inspecting commands show it.
type QueueJob struct {
	ID          string
	Payload     []byte
	State       string
	Priority    int64
	Group       string
	Attempt     int64
	MaxAttempts int64
	Due         int64 // ready: ready since; delayed: ripens at; in flight: lease ends at; dead: died at
	ExpireAt    int64 // TTL, 0: none
	Consumer    string
	Receipt     string // in flight only
	Reason      string // dead only
}

func (q *Queue) describe(n *queueNode) QueueJob {
	j := &n.val
	out := QueueJob{ID: n.key, Payload: bytesOf(j.payload), State: j.state.String(), Priority: int64(j.priority),
		Attempt: int64(j.attempt), MaxAttempts: int64(j.maxAttempts), Due: j.due}
	if x := j.ext; x != nil {
		out.Group, out.ExpireAt, out.Consumer, out.Reason = x.group, x.expireAt, x.consumer, x.reason
		if j.state == jobInflight {
			out.Receipt = receipt(x.delivery, n.key)
		}
	}
	return out
}

// QueueDead lists up to count dead jobs, oldest death first.
func (db *DB) QueueDead(key []byte, count int) ([]QueueJob, error) {
	var out []QueueJob
	err := db.queueInspect(key, func(q *Queue) {
		q.dead.Scan(func(r jobRef) bool {
			out = append(out, q.describe(r.n))
			return len(out) < count
		})
	})
	return out, err
}

// QueueDeadPage lists up to count dead jobs, oldest death first, from
// cursor (0: the first) and returns the cursor of the next one (0: none
// left). A cursor is a death's number, so a page never repeats or skips a
// job that stays dead meanwhile.
func (db *DB) QueueDeadPage(key []byte, cursor uint64, count int) (next uint64, out []QueueJob, err error) {
	err = db.queueInspect(key, func(q *Queue) {
		q.dead.Ascend(jobRef{key: cursor}, func(r jobRef) bool {
			if len(out) == count {
				next = r.key
				return false
			}
			out = append(out, q.describe(r.n))
			return true
		})
	})
	return next, out, err
}

// InflightCursor is where a page of in-flight jobs resumes: a position on
// the queue's timeline. The zero cursor is the start.
type InflightCursor struct {
	When int64
	Kind uint8
	Seq  uint64
}

// inflightScanPerJob bounds the timeline entries one page visits per job
// it may return: delays and TTLs share the timeline with leases, so a page
// may come back short (SCAN's contract) rather than walk a million delayed
// jobs under the lock.
const inflightScanPerJob = 16

// QueueInflightPage lists up to count jobs in flight, earliest lease end
// first, from cursor, and returns where the next page starts (done when
// none is left).
func (db *DB) QueueInflightPage(key []byte, cursor InflightCursor, count int) (next InflightCursor, done bool, out []QueueJob, err error) {
	done = true
	err = db.queueInspect(key, func(q *Queue) {
		budget := count*inflightScanPerJob + 64
		q.timeline.Ascend(queueEvent{when: cursor.When, kind: eventKind(cursor.Kind), seq: cursor.Seq}, func(ev queueEvent) bool {
			if len(out) == count || budget == 0 {
				next, done = InflightCursor{ev.when, uint8(ev.kind), ev.seq}, false
				return false
			}
			budget--
			if ev.kind == eventLease {
				out = append(out, q.describe(ev.n))
			}
			return true
		})
	})
	return next, done, out, err
}

// QueuePeek lists up to count ready jobs in the order POPACK would serve
// them (ignoring MAXINFLIGHT and RATE), changing nothing.
func (db *DB) QueuePeek(key []byte, count int) ([]QueueJob, error) {
	var out []QueueJob
	err := db.queueInspect(key, func(q *Queue) {
		p := newPeeker(&q.ready, q.conf.Weights)
		for len(out) < count {
			n := p.pick()
			if n == nil {
				break
			}
			out = append(out, q.describe(n))
		}
	})
	return out, err
}

// QueueInflight lists every job in flight, earliest lease end first.
func (db *DB) QueueInflight(key []byte) ([]QueueJob, error) {
	var out []QueueJob
	err := db.queueInspect(key, func(q *Queue) {
		q.timeline.Scan(func(ev queueEvent) bool {
			if ev.kind == eventLease {
				out = append(out, q.describe(ev.n))
			}
			return true
		})
	})
	return out, err
}

// QueueGet describes one job; ok is false when there is none.
func (db *DB) QueueGet(key, id []byte) (job QueueJob, ok bool, err error) {
	err = db.queueInspect(key, func(q *Queue) {
		if n := q.jobs.find(str(id)); n != nil {
			job, ok = q.describe(n), true
		}
	})
	return job, ok, err
}

// QueueSummary is QUEUE.STATS: the jobs in each state, the totals, and how
// long the job served next in each group has been ready, the longest of
// those (ms; 0 when none is ready): how far service lags.
type QueueSummary struct {
	Ready, Delayed, Inflight, Dead int64
	QueueCounters
	OldestReadyAge int64
}

// QueueStatsOf summarizes one queue; zeros when the key is absent.
func (db *DB) QueueStatsOf(key []byte) (QueueSummary, error) {
	var s QueueSummary
	err := db.queueInspect(key, func(q *Queue) {
		s.Ready, s.Delayed = int64(q.counts[jobReady]), int64(q.counts[jobDelayed])
		s.Inflight, s.Dead = int64(q.counts[jobInflight]), int64(q.counts[jobDead])
		s.QueueCounters = q.stats
		oldest := int64(0)
		q.ready.levels.Scan(func(l *readyLevel) bool {
			for _, g := range l.ring {
				if r, ok := g.jobs.Min(); ok && (oldest == 0 || r.n.val.due < oldest) {
					oldest = r.n.val.due
				}
			}
			return true
		})
		if oldest != 0 {
			s.OldestReadyAge = max(db.e.now-oldest, 0)
		}
	})
	return s, err
}

// QueueLen is the number of jobs not dead (ready, delayed, in flight).
func (db *DB) QueueLen(key []byte) (int, error) {
	n := 0
	err := db.queueInspect(key, func(q *Queue) { n = q.Len() })
	return n, err
}

// queueInspect runs a reading command on the queue as of now (what came
// due applied first, and recorded like any change).
func (db *DB) queueInspect(key []byte, fn func(q *Queue)) error {
	en, found := db.find(key)
	k := str(key)
	if !found {
		db.e.stats.KeyspaceMisses++
		return nil
	}
	q, ok := en.obj.(*Queue)
	if !ok {
		return ErrWrongType
	}
	db.e.stats.KeyspaceHits++
	db.touch(en.rec)
	if db.advanceQueue(k, bytesOf(k), q) {
		db.queueDone(k, bytesOf(k), q)
	}
	fn(q)
	return nil
}

// QueueRetry brings dead jobs back to ready with their attempts reset: the
// one named id, or all; it returns how many.
func (db *DB) QueueRetry(key, id []byte, all bool) (int, error) {
	k, q, err := db.queueWrite(key, false)
	if q == nil || err != nil {
		return 0, err
	}
	var nodes []*queueNode
	if all {
		q.dead.Scan(func(r jobRef) bool { nodes = append(nodes, r.n); return true })
	} else if n := q.jobs.find(str(id)); n != nil && n.val.state == jobDead {
		nodes = append(nodes, n)
	}
	for _, n := range nodes {
		q.move(n, jobReady, db.e.now)
		n.val.attempt = 0
		n.val.ext.reason, n.val.ext.deadSeq, n.val.ext.expireAt = "", 0, 0
		db.persistJob(key, n)
	}
	if len(nodes) > 0 {
		db.queueDone(k, key, q)
	}
	return len(nodes), nil
}

// QueueDel removes jobs in any state (an in-flight job's receipt goes
// stale); it returns how many there were.
func (db *DB) QueueDel(key []byte, ids [][]byte) (int, error) {
	k, q, err := db.queueWrite(key, false)
	if q == nil || err != nil {
		return 0, err
	}
	removed := 0
	for _, id := range ids {
		n := q.jobs.find(str(id))
		if n == nil {
			continue
		}
		db.releaseOwner(key, n)
		q.removeJob(n)
		db.deleteJobRecord(key, string(id))
		removed++
	}
	if removed > 0 {
		db.queueDone(k, key, q)
	}
	return removed, nil
}

// QueueConfigure applies QUEUE.CONFIG's settings (and PAUSE/RESUME), making
// the queue if absent.
func (db *DB) QueueConfigure(key []byte, apply func(c *QueueConfig)) error {
	k, q, err := db.queueWrite(key, true)
	if err != nil {
		return err
	}
	rate := q.conf.RateN != 0
	apply(&q.conf)
	if (q.conf.RateN != 0) != rate {
		q.rate.reset(q.conf.RateN)
	}
	db.queueDone(k, key, q)
	return nil
}

// QueueConfigOf is a queue's configuration; ok is false when the key is
// absent.
func (db *DB) QueueConfigOf(key []byte) (c QueueConfig, ok bool, err error) {
	err = db.queueInspect(key, func(q *Queue) { c, ok = q.conf, true })
	return c, ok, err
}
