package engine

import (
	"encoding/binary"
	"errors"
	"strconv"
	"strings"
)

// QUEUE keys in the keyspace: the commands' operations, their change
// records, and the key's one scheduler entry, at the earliest time on the
// queue's timeline (a delayed job ripening, a lease or TTL ending, an
// acked id leaving the de-duplication window; a rate limit's next token
// while jobs wait for it). Every operation first applies what came due
// (advance), so a queue answers as of now even before its entry fires.

// Errors of QUEUE commands.
var (
	ErrQueuePaused = errors.New("ERR the queue is paused for pushes")
	ErrBadReceipt  = errors.New("ERR invalid receipt")
)

// QueueFullError is a PUSH refused by MAXLEN (backpressure).
type QueueFullError struct{ MaxLen int64 }

func (e QueueFullError) Error() string {
	return "ERR the queue is full (MAXLEN " + strconv.FormatInt(e.MaxLen, 10) + ")"
}

// queueWrite looks key up for a QUEUE command, returning the stored key
// name too; create makes an empty queue when the key is absent.
func (db *DB) queueWrite(key []byte, create bool) (string, *Queue, error) {
	en, found := db.find(key)
	k := str(key)
	if !found {
		if !create {
			return "", nil, nil
		}
		q := newQueue()
		k = str(key)
		db.Set(key, q, true)
		return k, q, nil
	}
	q, ok := en.obj.(*Queue)
	if !ok {
		return "", nil, ErrWrongType
	}
	db.touch(en.rec)
	db.advanceQueue(k, key, q)
	return k, q, nil
}

// queueDone ends a write to a queue: its value record (configuration and
// totals), the dirty counter, WATCH, and the scheduler entry and ready
// signal.
func (db *DB) queueDone(k string, key []byte, q *Queue) {
	db.e.sink.PutValue(db.id, key, TypeQueue, q.appendMeta(db.e.recordBuf[:0]))
	db.modified(key)
	db.armQueue(k, q)
}

func (db *DB) persistJob(key []byte, n *queueNode) {
	e := db.e
	e.recordBuf = jobItemKey(e.recordBuf[:0], n.key)
	item := len(e.recordBuf)
	e.recordBuf = encodeJob(e.recordBuf, &n.val)
	e.sink.PutItem(db.id, key, e.recordBuf[:item], e.recordBuf[item:])
}

func (db *DB) deleteJobRecord(key []byte, id string) {
	db.e.recordBuf = jobItemKey(db.e.recordBuf[:0], id)
	db.e.sink.DeleteItem(db.id, key, db.e.recordBuf)
}

// servable reports whether a POPACK now would get a job.
func (q *Queue) servable(now int64) bool {
	if q.counts[jobReady] == 0 || q.conf.PausePop {
		return false
	}
	if q.conf.MaxInflight > 0 && int64(q.counts[jobInflight]) >= q.conf.MaxInflight {
		return false
	}
	if q.conf.RateN > 0 && q.rate.available(now, q.conf.RateN, q.conf.RatePer) == 0 {
		return false
	}
	if q.conf.GroupInflight > 0 {
		p := q.picker(true)
		return p.pick() != nil
	}
	return true
}

// armQueue points the key's scheduler entry at its next time and signals
// the key ready when a job can be served now.
func (db *DB) armQueue(k string, q *Queue) {
	now := db.e.now
	want := int64(0)
	if ev, ok := q.timeline.Min(); ok {
		want = max(ev.when, now+1)
	}
	if q.servable(now) {
		db.signalReady(bytesOf(k))
	} else if q.conf.RateN > 0 && q.counts[jobReady] > 0 && !q.conf.PausePop {
		if t := q.rate.nextToken(now, q.conf.RateN, q.conf.RatePer); want == 0 || t < want {
			want = max(t, now+1)
		}
	}
	if want == q.armed {
		return
	}
	db.disarmQueue(k, q)
	if want != 0 {
		q.armed = want
		db.e.schedule(Timer{When: want, Kind: timerQueue, DB: uint8(db.phys), Key: k})
	}
}

func (db *DB) disarmQueue(k string, q *Queue) {
	if q.armed != 0 {
		db.e.unschedule(Timer{When: q.armed, Kind: timerQueue, DB: uint8(db.phys), Key: k})
		q.armed = 0
	}
}

// timerQueue is the kind of a QUEUE key's scheduler entry.
var timerQueue TimerKind

func init() { timerQueue = registerTimerKind("queue", (*Engine).fireQueue) }

// fireQueue is the scheduler's handler for QUEUE keys: it applies what
// came due and records it, then re-aims the entry.
func (e *Engine) fireQueue(t Timer) {
	db := e.timerDB(t)
	k := t.Key
	q, ok := db.rawObject(bytesOf(k)).(*Queue)
	if !ok || q.armed != t.When {
		return
	}
	q.armed = 0
	key := bytesOf(k)
	if db.advanceQueue(k, key, q) {
		db.queueDone(k, key, q)
		return
	}
	db.armQueue(k, q)
}

// attached and detached make a QUEUE value key-bound (family.go).
func (q *Queue) attached(db *DB, k string) {
	st := queueState.of(db.e)
	st.keys++
	q.indexLoaded()
	q.total = &st.counts
	for s, c := range q.counts {
		st.counts[s] += int64(c)
	}
	db.armQueue(k, q)
}

func (q *Queue) detached(db *DB, k string) {
	st := queueState.of(db.e)
	st.keys--
	for s, c := range q.counts {
		st.counts[s] -= int64(c)
	}
	q.total = nil
	db.disarmQueue(k, q)
}

// advanceQueue applies every timeline event due now, recording each job it
// changes, and reports whether anything changed.
func (db *DB) advanceQueue(k string, key []byte, q *Queue) (changed bool) {
	now := db.e.now
	var dead, redelivered bool
	for {
		ev, ok := q.timeline.Min()
		if !ok || ev.when > now {
			break
		}
		q.timeline.Delete(ev)
		changed = true
		n := ev.n
		switch ev.kind {
		case eventForget:
			delete(q.acked, ev.id)
			db.e.recordBuf = ackedItemKey(db.e.recordBuf[:0], ev.id)
			db.e.sink.DeleteItem(db.id, key, db.e.recordBuf)
			continue
		case eventRipen:
			q.move(n, jobReady, now)
		case eventLease:
			db.releaseOwner(key, n)
			if q.expired(n, now) || n.val.attempt >= n.val.maxAttempts {
				q.kill(n, now, q.deathReason(n, now))
				queueState.of(db.e).deadLettered++
				dead = true
			} else {
				n.val.ext.consumer, n.val.ext.delivery = "", 0
				q.move(n, jobReady, now)
				q.stats.Redelivered++
				queueState.of(db.e).redelivered++
				redelivered = true
			}
		case eventExpire:
			if n.val.state == jobInflight {
				continue // it dies when its lease ends, unless acked first
			}
			q.kill(n, now, "expired")
			queueState.of(db.e).deadLettered++
			dead = true
		}
		db.persistJob(key, n)
	}
	if dead {
		db.e.notify(NotifyModule, "queue.dead", db.id, key)
	}
	if redelivered {
		db.e.notify(NotifyModule, "queue.redeliver", db.id, key)
	}
	return changed
}

func (q *Queue) expired(n *queueNode, now int64) bool {
	x := n.val.ext
	return x != nil && x.expireAt != 0 && x.expireAt <= now
}

func (q *Queue) deathReason(n *queueNode, now int64) string {
	if q.expired(n, now) {
		return "expired"
	}
	return "max attempts"
}

// kill dead-letters a job.
func (q *Queue) kill(n *queueNode, now int64, reason string) {
	q.deadSeq++
	x := n.val.extra()
	x.reason, x.deadSeq, x.consumer, x.delivery, x.owner = reason, q.deadSeq, "", 0, 0
	q.move(n, jobDead, now)
	q.stats.DeadLettered++
	if reason == "expired" {
		q.stats.Expired++
	}
}

// QueuePushArgs are QUEUE.PUSH's options.
type QueuePushArgs struct {
	ID          []byte
	HasID       bool
	Priority    int32
	ReadyAt     int64 // unix ms; 0: ready now
	MaxAttempts int64 // 0: the queue's default; at most MaxQueueAttempts
	TTL         int64 // ms; 0: none
	Group       []byte
}

// QueuePush adds one job and returns its id; pushed is false when a job
// with that id is ready, delayed or in flight, or was acked within the
// de-duplication window.
func (db *DB) QueuePush(key, payload []byte, a QueuePushArgs) (id string, pushed bool, err error) {
	ids, err := db.queuePush(key, [][]byte{payload}, a)
	if err != nil || ids[0] == "" {
		return "", false, err
	}
	return ids[0], true, nil
}

// QueuePushMany adds one job per payload, with the queue's defaults, and
// returns their ids. A push MAXLEN refuses refuses them all.
func (db *DB) QueuePushMany(key []byte, payloads [][]byte) ([]string, error) {
	return db.queuePush(key, payloads, QueuePushArgs{})
}

func (db *DB) queuePush(key []byte, payloads [][]byte, a QueuePushArgs) ([]string, error) {
	k, q, err := db.queueWrite(key, true)
	if err != nil {
		return nil, err
	}
	if q.conf.PausePush {
		db.queueDone(k, key, q)
		return nil, ErrQueuePaused
	}
	if q.conf.MaxLen > 0 && int64(q.Len()+len(payloads)) > q.conf.MaxLen {
		db.queueDone(k, key, q)
		return nil, QueueFullError{q.conf.MaxLen}
	}
	now := db.e.now
	ids := make([]string, len(payloads))
	for i, p := range payloads {
		id := ""
		if a.HasID {
			id = string(a.ID)
			if n := q.jobs.find(id); n != nil {
				if n.val.state != jobDead {
					continue // de-duplicated
				}
				q.removeJob(n) // a dead job of that id is replaced
			} else if _, ok := q.acked[id]; ok {
				continue
			}
		} else {
			for id = q.nextID(now); q.jobs.Has(id) || q.acked[id] != 0; id = q.nextID(now) {
			}
		}
		n := q.addJob(id, p, a, now)
		db.persistJob(key, n)
		ids[i] = n.key
	}
	db.queueDone(k, key, q)
	return ids, nil
}

// addJob stores a new job, ready or delayed.
func (q *Queue) addJob(id string, payload []byte, a QueuePushArgs, now int64) *queueNode {
	q.seq++
	j := queueJob{payload: string(payload), seq: q.seq, due: now, priority: a.Priority,
		maxAttempts: uint16(q.conf.MaxAttempts), state: jobReady}
	if a.MaxAttempts > 0 {
		j.maxAttempts = uint16(a.MaxAttempts)
	}
	if a.ReadyAt > now {
		j.state, j.due = jobDelayed, a.ReadyAt
	}
	if len(a.Group) > 0 {
		j.extra().group = string(a.Group)
	}
	if a.TTL > 0 {
		j.extra().expireAt = now + a.TTL
	}
	n, _ := q.jobs.insertNode(id)
	n.val = j
	q.count(n)
	q.index(n)
	q.stats.Pushed++
	return n
}

// removeJob drops a job in any state.
func (q *Queue) removeJob(n *queueNode) {
	q.unindex(n)
	q.uncount(n)
	q.jobs.Delete(n.key)
}

// QueuePopArgs are QUEUE.POPACK's.
type QueuePopArgs struct {
	Consumer []byte
	Count    int
	Lease    int64 // ms; 0: the queue's default
	Owner    int64 // the client, for RELEASE-ON-DISCONNECT (0: none)
}

// QueueDelivery is one job POPACK handed out.
type QueueDelivery struct {
	ID      string
	Payload []byte
	Attempt int64
	Receipt string
	Token   uint64 // the delivery's fencing token
}

// picker returns the service-order picker of the queue's ready jobs;
// groups at GROUP-MAXINFLIGHT are skipped unless sim (PEEK shows order).
func (q *Queue) picker(sim bool) *picker {
	var p *picker
	if sim {
		p = newPeeker(&q.ready, q.conf.Weights)
	} else {
		p = &picker{rs: &q.ready, weights: q.conf.Weights}
	}
	if capN := q.conf.GroupInflight; capN > 0 {
		p.skip = func(g string) bool { return int64(q.inflightByGroup[g]) >= capN }
	}
	return p
}

// QueuePop leases up to Count ready jobs in service order, within the
// queue's MAXINFLIGHT, RATE and GROUP-MAXINFLIGHT. nil when the key is
// absent.
func (db *DB) QueuePop(key []byte, a QueuePopArgs) ([]QueueDelivery, error) {
	k, q, err := db.queueWrite(key, false)
	if q == nil || err != nil {
		return nil, err
	}
	now := db.e.now
	limit := int64(a.Count)
	if q.conf.PausePop {
		limit = 0
	}
	if m := q.conf.MaxInflight; m > 0 {
		limit = min(limit, m-int64(q.counts[jobInflight]))
	}
	if q.conf.RateN > 0 {
		limit = min(limit, q.rate.available(now, q.conf.RateN, q.conf.RatePer))
	}
	lease := a.Lease
	if lease <= 0 {
		lease = q.conf.Lease
	}
	var out []QueueDelivery
	st := queueState.of(db.e)
	p := q.picker(false)
	for int64(len(out)) < limit {
		n := p.pick()
		if n == nil {
			break
		}
		st.wait.record(msDuration(now - n.val.due))
		q.ready.remove(n)
		q.shift(jobReady, -1)
		j := &n.val
		j.attempt++
		j.state, j.due = jobInflight, now+lease
		q.shift(jobInflight, 1)
		x := j.extra()
		x.consumer = string(a.Consumer)
		x.delivery = q.nextToken()
		x.owner = a.Owner
		q.index(n)
		if a.Owner != 0 {
			st.own(a.Owner, db.phys, k, n.key, x.delivery)
		}
		db.persistJob(key, n)
		out = append(out, QueueDelivery{ID: n.key, Payload: bytesOf(j.payload), Attempt: int64(j.attempt),
			Receipt: receipt(x.delivery, n.key), Token: x.delivery})
	}
	if q.conf.RateN > 0 {
		q.rate.take(int64(len(out)), q.conf.RatePer)
	}
	st.delivered += int64(len(out))
	if len(out) == 0 {
		db.armQueue(k, q)
		return nil, nil
	}
	db.queueDone(k, key, q)
	return out, nil
}

// nextToken hands out the next fencing token, raising the persisted
// ceiling a block ahead when it is reached.
func (q *Queue) nextToken() uint64 {
	q.tokens++
	if q.tokens >= q.tokenCeil {
		q.tokenCeil = q.tokens + tokenBlock
	}
	return q.tokens
}

// A receipt names one delivery: its fencing token, a colon, the job id.
func receipt(token uint64, id string) string {
	return strconv.FormatUint(token, 10) + ":" + id
}

func parseReceipt(r []byte) (token uint64, id string, ok bool) {
	tok, rest, found := strings.Cut(string(r), ":")
	if !found {
		return 0, "", false
	}
	t, err := strconv.ParseUint(tok, 10, 64)
	if err != nil || t == 0 || strconv.FormatUint(t, 10) != tok {
		return 0, "", false
	}
	return t, rest, true
}

// delivery finds the in-flight job a receipt names; nil when the receipt
// is stale (the lease ended, the job went to another consumer, was acked or
// deleted).
func (q *Queue) delivery(token uint64, id string) *queueNode {
	n := q.jobs.find(id)
	if n == nil || n.val.state != jobInflight || n.val.ext.delivery != token {
		return nil
	}
	return n
}

// parseReceipts checks every receipt before any is used: one malformed
// receipt fails the whole command.
func parseReceipts(receipts [][]byte) ([]uint64, []string, error) {
	tokens, ids := make([]uint64, len(receipts)), make([]string, len(receipts))
	for i, r := range receipts {
		t, id, ok := parseReceipt(r)
		if !ok {
			return nil, nil, ErrBadReceipt
		}
		tokens[i], ids[i] = t, id
	}
	return tokens, ids, nil
}

// QueueAck settles deliveries: each job named by a live receipt is done
// and leaves the queue (its id remembered for DEDUPE-WINDOW). It returns
// how many were acked; the others count as stale.
func (db *DB) QueueAck(key []byte, receipts [][]byte) (int, error) {
	tokens, ids, err := parseReceipts(receipts)
	if err != nil {
		return 0, err
	}
	k, q, err := db.queueWrite(key, false)
	if q == nil || err != nil {
		return 0, err
	}
	now := db.e.now
	acked := 0
	for i, id := range ids {
		n := q.delivery(tokens[i], id)
		if n == nil {
			q.stats.StaleAcks++
			continue
		}
		db.releaseOwner(key, n)
		q.removeJob(n)
		db.deleteJobRecord(key, id)
		if w := q.conf.DedupeWindow; w > 0 {
			q.remember(id, now+w)
			db.e.recordBuf = ackedItemKey(db.e.recordBuf[:0], id)
			item := len(db.e.recordBuf)
			db.e.recordBuf = binary.AppendVarint(db.e.recordBuf, now+w)
			db.e.sink.PutItem(db.id, key, db.e.recordBuf[:item], db.e.recordBuf[item:])
		}
		q.stats.Acked++
		acked++
	}
	queueState.of(db.e).acked += int64(acked)
	db.queueDone(k, key, q)
	return acked, nil
}

// QueueNack hands a delivery back: the job is ready again (or delayed by
// ms, a backoff), or dead when it is out of attempts or past its TTL. false
// for a stale receipt.
func (db *DB) QueueNack(key, rcpt []byte, delay int64) (bool, error) {
	return db.queueSettle(key, rcpt, func(q *Queue, n *queueNode, now int64) {
		db.releaseOwner(key, n)
		q.stats.Nacked++
		queueState.of(db.e).nacked++
		switch {
		case q.expired(n, now) || n.val.attempt >= n.val.maxAttempts:
			q.kill(n, now, q.deathReason(n, now))
			queueState.of(db.e).deadLettered++
			db.e.notify(NotifyModule, "queue.dead", db.id, key)
		case delay > 0:
			n.val.ext.consumer, n.val.ext.delivery = "", 0
			q.move(n, jobDelayed, now+delay)
		default:
			n.val.ext.consumer, n.val.ext.delivery = "", 0
			q.move(n, jobReady, now)
		}
	})
}

// QueueExtend renews a delivery's lease to end ms from now; false for a
// stale receipt.
func (db *DB) QueueExtend(key, rcpt []byte, ms int64) (bool, error) {
	return db.queueSettle(key, rcpt, func(q *Queue, n *queueNode, now int64) {
		q.move(n, jobInflight, now+ms)
	})
}

func (db *DB) queueSettle(key, rcpt []byte, op func(q *Queue, n *queueNode, now int64)) (bool, error) {
	token, id, ok := parseReceipt(rcpt)
	if !ok {
		return false, ErrBadReceipt
	}
	k, q, err := db.queueWrite(key, false)
	if q == nil || err != nil {
		return false, err
	}
	n := q.delivery(token, id)
	if n == nil {
		q.stats.StaleAcks++
		db.queueDone(k, key, q)
		return false, nil
	}
	op(q, n, db.e.now)
	db.persistJob(key, n)
	db.queueDone(k, key, q)
	return true, nil
}
