package engine

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"

	"github.com/tidwall/btree"
)

// Queue is a QUEUE key: a reliable work queue (SPEC.md §2, seed 004). Each
// job has an id, a payload, a priority and a state: ready (waiting in
// service order), delayed (until a time), in flight (leased to a consumer
// until its lease ends) or dead (out of attempts, kept for inspection).
//
// Jobs are found by id in a Dict whose nodes the indexes point at: the
// ready jobs in service order (queue_sched.go), the timeline of everything
// a time ends (delays, leases, TTLs), and the dead letters in the order they
// died. Like a DELAY key, the key has one entry in the engine's scheduler,
// at the earliest time on its timeline (queue_db.go).
type Queue struct {
	objHeader
	jobs  *Dict[queueJob]
	ready readySet
	// timeline orders the times that end a state: a delayed job ripens,
	// a lease ends, a TTL runs out, an acked id leaves the de-duplication
	// window.
	timeline *btree.BTreeG[queueEvent]
	dead     *btree.BTreeG[jobRef] // by the order they died
	// acked holds ids acknowledged within the de-duplication window, with
	// the end of their window.
	acked map[string]int64
	conf  QueueConfig
	stats QueueCounters
	// seq numbers pushes (FIFO order), deadSeq deaths; tokens number
	// deliveries: a receipt's fencing token. tokenCeil is the persisted
	// bound tokens stay below, raised a block at a time, so a restart never
	// hands out a token twice.
	seq, deadSeq      uint64
	tokens, tokenCeil uint64
	idMs              int64 // the generated ids' clock, and
	idSeq             int64 // the sequence within its millisecond
	counts            [numJobStates]int
	// total is the engine's per-state sum over every attached queue (INFO
	// queue), kept with counts; nil while the queue is not stored.
	total              *[numJobStates]int64
	inflightByGroup    map[string]int
	armed              int64 // the When of the key's scheduler entry (0: none)
	rate               tokenBucket
	payloadBytes, keyB int
	loaded             []*queueNode // jobs loaded at start-up, indexed when the load ends
}

// QueueConfig is a queue's configuration (QUEUE.CONFIG).
type QueueConfig struct {
	Lease          int64           // default lease, ms
	MaxAttempts    int64           // default for new jobs
	DedupeWindow   int64           // ms an acked id is remembered (0: not)
	MaxLen         int64           // jobs not dead a PUSH may not exceed (0: no limit)
	MaxInflight    int64           // 0: no limit
	GroupInflight  int64           // per group; 0: no limit
	RateN, RatePer int64           // RATE n per-ms (0: no limit)
	Weights        map[int64]int64 // weighted service by priority; nil: strict
	PausePush      bool
	PausePop       bool
}

// Defaults of a new queue.
const (
	queueDefaultLease       = 30000
	queueDefaultMaxAttempts = 16
)

// QueueCounters are a queue's totals since it was created (QUEUE.STATS).
type QueueCounters struct {
	Pushed, Acked, Nacked, Redelivered, DeadLettered, StaleAcks, Expired int64
}

// jobState is where a job is.
type jobState uint8

const (
	jobReady jobState = iota
	jobDelayed
	jobInflight
	jobDead
	numJobStates
)

var jobStateNames = [numJobStates]string{"ready", "delayed", "inflight", "dead"}

func (s jobState) String() string { return jobStateNames[s] }

// queueJob is one job. Fields only some jobs need live in ext, so a plain
// ready job costs its node and one tree item.
// The fields are sized so that a job's Dict node is 96 bytes (a size
// class of Go's allocator; one field more and it would be 112).
type queueJob struct {
	payload     string
	seq         uint64 // push order
	due         int64  // ready: ready since; delayed: ripens at; in flight: lease end; dead: died at
	priority    int32
	attempt     uint16 // deliveries so far
	maxAttempts uint16
	state       jobState
	ext         *jobExtra
}

// Limits of the packed fields.
const (
	MaxQueuePriority = 1<<31 - 1
	MinQueuePriority = -1 << 31
	MaxQueueAttempts = 1<<16 - 1
)

type jobExtra struct {
	group    string
	expireAt int64 // TTL: dead-lettered if not acked by then (0: none)
	consumer string
	delivery uint64 // the in-flight delivery's fencing token
	owner    int64  // client holding it with RELEASE-ON-DISCONNECT (memory only)
	reason   string // why a dead job died
	deadSeq  uint64
}

type queueNode = dictNode[queueJob]

func (j *queueJob) extra() *jobExtra {
	if j.ext == nil {
		j.ext = &jobExtra{}
	}
	return j.ext
}

func (j *queueJob) group() string {
	if j.ext == nil {
		return ""
	}
	return j.ext.group
}

// jobRef is a tree item: an order key and the job.
type jobRef struct {
	key uint64
	n   *queueNode
}

func jobRefLess(a, b jobRef) bool { return a.key < b.key }

// queueEvent is a timeline item: when, what ends then, and the job (nil
// for the end of an acked id's de-duplication window, named by id).
type queueEvent struct {
	when int64
	kind eventKind
	seq  uint64 // the job's, or 0
	n    *queueNode
	id   string // de-duplication window ends only
}

type eventKind uint8

const (
	eventRipen  eventKind = iota // a delayed job becomes ready
	eventLease                   // a lease ends
	eventExpire                  // a TTL runs out
	eventForget                  // an acked id leaves the de-duplication window
)

func queueEventLess(a, b queueEvent) bool {
	switch {
	case a.when != b.when:
		return a.when < b.when
	case a.kind != b.kind:
		return a.kind < b.kind
	case a.seq != b.seq:
		return a.seq < b.seq
	}
	return a.id < b.id
}

func newQueue() *Queue {
	return &Queue{
		jobs:     NewDict[queueJob](),
		ready:    newReadySet(),
		timeline: btree.NewBTreeGOptions(queueEventLess, btree.Options{NoLocks: true}),
		dead:     btree.NewBTreeGOptions(jobRefLess, btree.Options{NoLocks: true}),
		conf:     QueueConfig{Lease: queueDefaultLease, MaxAttempts: queueDefaultMaxAttempts},
	}
}

// TypeQueue is the type of QUEUE keys (TYPE reports "queue"). Persisted:
// never renumber it.
const TypeQueue Type = 8

// Type is TypeQueue.
func (q *Queue) Type() Type { return TypeQueue }

// Encoding names the structure OBJECT ENCODING reports.
func (q *Queue) Encoding() string { return "jobindex" }

// Len is the number of jobs not dead: the work outstanding.
func (q *Queue) Len() int { return q.jobs.Len() - q.counts[jobDead] }

// Per-job overhead: the Dict node, one tree item with the tree's slack, a
// bucket pointer.
const queueJobOverhead = 96 + 24 + 12

// MemoryUsage estimates the value's heap bytes.
func (q *Queue) MemoryUsage() int {
	n := 256 + q.jobs.Len()*queueJobOverhead + q.payloadBytes + q.keyB
	n += (q.counts[jobInflight] + q.counts[jobDead]) * 96 // extras
	return n + len(q.acked)*64
}

// Clone copies every job in its state, the configuration and the totals
// (COPY). The copy's in-flight receipts are the original's: an ACK acks
// the job in the key it names.
func (q *Queue) Clone() Object {
	c := newQueue()
	c.conf = q.conf
	c.conf.Weights = cloneWeights(q.conf.Weights)
	c.stats, c.seq, c.deadSeq, c.tokens, c.tokenCeil, c.idMs, c.idSeq =
		q.stats, q.seq, q.deadSeq, q.tokens, q.tokenCeil, q.idMs, q.idSeq
	q.jobs.ForEach(func(id string, j *queueJob) bool {
		cj := *j
		if j.ext != nil {
			ext := *j.ext
			ext.owner = 0
			cj.ext = &ext
		}
		c.addLoaded(id, cj)
		return true
	})
	for id, until := range q.acked {
		c.remember(id, until)
	}
	c.indexLoaded()
	return c
}

func cloneWeights(w map[int64]int64) map[int64]int64 {
	if w == nil {
		return nil
	}
	c := make(map[int64]int64, len(w))
	for p, x := range w {
		c[p] = x
	}
	return c
}

// The records: the value record holds the configuration and the totals;
// each job is an item record under 'j' and its id; each acked id within
// the de-duplication window is one under 'a' and its id, holding the end
// of its window. Every time is absolute, so leases end and delays ripen
// when they would have, across a restart.
const (
	queueItemJob   = 'j'
	queueItemAcked = 'a'
	queueFormat    = 1
)

// tokenBlock is how many fencing tokens the persisted ceiling runs ahead.
const tokenBlock = 1024

func (q *Queue) appendMeta(dst []byte) []byte {
	c := &q.conf
	dst = append(dst, queueFormat)
	flags := byte(0)
	if c.PausePush {
		flags |= 1
	}
	if c.PausePop {
		flags |= 2
	}
	dst = append(dst, flags)
	for _, v := range []int64{c.Lease, c.MaxAttempts, c.DedupeWindow, c.MaxLen, c.MaxInflight, c.GroupInflight,
		c.RateN, c.RatePer, int64(q.tokenCeil), q.idMs, q.idSeq, int64(q.deadSeq),
		q.stats.Pushed, q.stats.Acked, q.stats.Nacked, q.stats.Redelivered, q.stats.DeadLettered,
		q.stats.StaleAcks, q.stats.Expired} {
		dst = binary.AppendVarint(dst, v)
	}
	dst = binary.AppendUvarint(dst, uint64(len(c.Weights)))
	for _, p := range sortedPriorities(c.Weights) {
		dst = binary.AppendVarint(dst, p)
		dst = binary.AppendVarint(dst, c.Weights[p])
	}
	return dst
}

var errBadQueueRecord = errors.New("malformed queue record")

func decodeQueueMeta(p []byte) (*Queue, error) {
	if len(p) < 2 || p[0] != queueFormat {
		return nil, errBadQueueRecord
	}
	q := newQueue()
	c := &q.conf
	c.PausePush, c.PausePop = p[1]&1 != 0, p[1]&2 != 0
	r := recordReader{p: p[2:]}
	var tokenCeil, deadSeq int64
	for _, v := range []*int64{&c.Lease, &c.MaxAttempts, &c.DedupeWindow, &c.MaxLen, &c.MaxInflight,
		&c.GroupInflight, &c.RateN, &c.RatePer, &tokenCeil, &q.idMs, &q.idSeq, &deadSeq,
		&q.stats.Pushed, &q.stats.Acked, &q.stats.Nacked, &q.stats.Redelivered, &q.stats.DeadLettered,
		&q.stats.StaleAcks, &q.stats.Expired} {
		*v = r.varint()
	}
	if n := r.uvarint(); n > 0 && r.err == nil {
		if n > uint64(len(r.p)) { // a forged count (RESTORE): each weight takes bytes
			return nil, errBadQueueRecord
		}
		c.Weights = map[int64]int64{}
		for range n {
			pr := r.varint()
			c.Weights[pr] = r.varint()
		}
	}
	if r.err != nil || len(r.p) != 0 {
		return nil, errBadQueueRecord
	}
	q.tokens, q.tokenCeil, q.deadSeq = uint64(tokenCeil), uint64(tokenCeil), uint64(deadSeq)
	q.rate.reset(c.RateN)
	return q, nil
}

// encodeJob is a job's item record: state, counters and times, the
// optional fields behind a flags byte, then the payload.
func encodeJob(dst []byte, j *queueJob) []byte {
	flags := byte(0)
	x := j.ext
	if x != nil {
		if x.group != "" {
			flags |= 1
		}
		if x.expireAt != 0 {
			flags |= 2
		}
		if j.state == jobInflight {
			flags |= 4
		}
		if j.state == jobDead {
			flags |= 8
		}
	}
	dst = append(dst, byte(j.state), flags)
	dst = binary.AppendUvarint(dst, j.seq)
	dst = binary.AppendVarint(dst, j.due)
	dst = binary.AppendVarint(dst, int64(j.priority))
	dst = binary.AppendUvarint(dst, uint64(j.attempt))
	dst = binary.AppendUvarint(dst, uint64(j.maxAttempts))
	if flags&1 != 0 {
		dst = appendBytes(dst, x.group)
	}
	if flags&2 != 0 {
		dst = binary.AppendVarint(dst, x.expireAt)
	}
	if flags&4 != 0 {
		dst = appendBytes(dst, x.consumer)
		dst = binary.AppendUvarint(dst, x.delivery)
	}
	if flags&8 != 0 {
		dst = appendBytes(dst, x.reason)
		dst = binary.AppendUvarint(dst, x.deadSeq)
	}
	return append(dst, j.payload...)
}

func appendBytes(dst []byte, s string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

func decodeJob(val []byte) (queueJob, error) {
	var j queueJob
	if len(val) < 2 || jobState(val[0]) >= numJobStates {
		return j, errBadQueueRecord
	}
	j.state = jobState(val[0])
	flags := val[1]
	r := recordReader{p: val[2:]}
	j.seq = r.uvarint()
	j.due = r.varint()
	prio, attempt, maxAttempts := r.varint(), r.uvarint(), r.uvarint()
	if prio < MinQueuePriority || prio > MaxQueuePriority || attempt > MaxQueueAttempts || maxAttempts > MaxQueueAttempts {
		return j, errBadQueueRecord
	}
	j.priority, j.attempt, j.maxAttempts = int32(prio), uint16(attempt), uint16(maxAttempts)
	if flags != 0 {
		x := j.extra()
		if flags&1 != 0 {
			x.group = r.str()
		}
		if flags&2 != 0 {
			x.expireAt = r.varint()
		}
		if flags&4 != 0 {
			x.consumer = r.str()
			x.delivery = r.uvarint()
		}
		if flags&8 != 0 {
			x.reason = r.str()
			x.deadSeq = r.uvarint()
		}
	}
	if r.err != nil || (j.state == jobInflight) != (flags&4 != 0) || (j.state == jobDead) != (flags&8 != 0) {
		return j, errBadQueueRecord
	}
	j.payload = string(r.p)
	return j, nil
}

// recordReader reads the varints and strings of a record, remembering the
// first error.
type recordReader struct {
	p   []byte
	err error
}

func (r *recordReader) uvarint() uint64 {
	v, n := binary.Uvarint(r.p)
	if n <= 0 {
		r.err = errBadQueueRecord
		return 0
	}
	r.p = r.p[n:]
	return v
}

func (r *recordReader) varint() int64 {
	v, n := binary.Varint(r.p)
	if n <= 0 {
		r.err = errBadQueueRecord
		return 0
	}
	r.p = r.p[n:]
	return v
}

func (r *recordReader) str() string {
	n := r.uvarint()
	if r.err != nil || n > uint64(len(r.p)) {
		r.err = errBadQueueRecord
		return ""
	}
	s := string(r.p[:n])
	r.p = r.p[n:]
	return s
}

// persist writes the value record, every job and every remembered id.
func (q *Queue) persist(sink ChangeSink, db int, key []byte) {
	sink.PutValue(db, key, TypeQueue, q.appendMeta(nil))
	var buf []byte
	q.jobs.ForEach(func(id string, j *queueJob) bool {
		buf = encodeJob(append(buf[:0], queueItemJob), j)
		sink.PutItem(db, key, jobItemKey(nil, id), buf[1:])
		return true
	})
	for id, until := range q.acked {
		sink.PutItem(db, key, ackedItemKey(nil, id), binary.AppendVarint(nil, until))
	}
}

func (q *Queue) hasItems() bool { return true }

func jobItemKey(dst []byte, id string) []byte   { return append(append(dst, queueItemJob), id...) }
func ackedItemKey(dst []byte, id string) []byte { return append(append(dst, queueItemAcked), id...) }

func (q *Queue) loadItem(item, val []byte) error {
	if len(item) == 0 {
		return errBadQueueRecord
	}
	id := string(item[1:])
	switch item[0] {
	case queueItemJob:
		j, err := decodeJob(val)
		if err != nil {
			return fmt.Errorf("job %q: %w", id, err)
		}
		if n := q.jobs.find(id); n != nil {
			q.uncount(n) // a record replayed twice: the last one wins
			n.val = j
			q.count(n)
			return nil
		}
		q.addLoaded(id, j)
	case queueItemAcked:
		until, n := binary.Varint(val)
		if n != len(val) {
			return fmt.Errorf("acked id %q: %w", id, errBadQueueRecord)
		}
		q.acked[id] = until
	default:
		return fmt.Errorf("item %q: %w", item, errBadQueueRecord)
	}
	return nil
}

// addLoaded stores a job whose indexes are built later (indexLoaded).
func (q *Queue) addLoaded(id string, j queueJob) {
	n, _ := q.jobs.insertNode(id)
	n.val = j
	q.count(n)
	q.loaded = append(q.loaded, n)
}

// indexLoaded indexes the jobs a load or a clone brought in: ready ones in
// service order, the others on the timeline or among the dead.
func (q *Queue) indexLoaded() {
	if q.loaded == nil && len(q.acked) == 0 {
		return
	}
	for _, n := range q.loaded {
		if n.val.seq > q.seq {
			q.seq = n.val.seq
		}
		if x := n.val.ext; x != nil && x.delivery >= q.tokens {
			q.tokens = x.delivery + 1
		}
		q.index(n)
	}
	q.loaded = nil
	for id, until := range q.acked {
		q.timeline.Set(queueEvent{when: until, kind: eventForget, id: id})
	}
}

// remember keeps an acked id for the de-duplication window.
func (q *Queue) remember(id string, until int64) {
	if q.acked == nil {
		q.acked = map[string]int64{}
	}
	if old, ok := q.acked[id]; ok {
		q.timeline.Delete(queueEvent{when: old, kind: eventForget, id: id})
	}
	q.acked[id] = until
	q.timeline.Set(queueEvent{when: until, kind: eventForget, id: id})
}

// shift adds d to the count of jobs in state s, and to the engine's total.
func (q *Queue) shift(s jobState, d int) {
	q.counts[s] += d
	if q.total != nil {
		q.total[s] += int64(d)
	}
}

// count and uncount keep the per-state counts and byte totals.
func (q *Queue) count(n *queueNode) {
	q.shift(n.val.state, 1)
	q.payloadBytes += roundAlloc(len(n.val.payload))
	if len(n.key) > dictShortKey {
		q.keyB += roundAlloc(len(n.key))
	}
}

func (q *Queue) uncount(n *queueNode) {
	q.shift(n.val.state, -1)
	q.payloadBytes -= roundAlloc(len(n.val.payload))
	if len(n.key) > dictShortKey {
		q.keyB -= roundAlloc(len(n.key))
	}
}

func init() {
	registerType(TypeQueue, "queue", func(payload []byte) (Object, error) {
		q, err := decodeQueueMeta(payload)
		if err != nil {
			return nil, fmt.Errorf("queue value record: %w", err)
		}
		q.acked = map[string]int64{}
		return q, nil
	})
}

// nextID generates a job id: the push's millisecond in 11 hex digits and a
// sequence within it in 4, so ids sort as they were pushed and fit a Dict
// node's inline key. A clock that went back keeps the last millisecond.
func (q *Queue) nextID(now int64) string {
	switch {
	case now > q.idMs:
		q.idMs, q.idSeq = now, 0
	case q.idSeq < 0xffff:
		q.idSeq++
	default:
		q.idMs, q.idSeq = q.idMs+1, 0
	}
	var b [16]byte
	ms := strconv.AppendInt(b[:0], q.idMs, 16)
	id := make([]byte, 0, 16)
	for range 11 - len(ms) {
		id = append(id, '0')
	}
	id = append(id, ms...)
	id = append(id, '-')
	s := strconv.AppendInt(b[:0], q.idSeq, 16)
	for range 4 - len(s) {
		id = append(id, '0')
	}
	return string(append(id, s...))
}
