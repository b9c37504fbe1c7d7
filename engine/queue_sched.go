package engine

import (
	"slices"

	"github.com/tidwall/btree"
)

// Service order of a queue's ready jobs. Priorities are levels, highest
// first; within a level, jobs are grouped (QUEUE.PUSH ... GROUP; one
// unnamed group by default), the groups are served round-robin and each
// group in push order. Between levels, service is strict (the highest
// level with a servable job) or, with WEIGHTS, smooth weighted round-robin
// among the levels that have one, so a low priority gets its share and
// never starves.
type readySet struct {
	levels *btree.BTreeG[*readyLevel] // highest priority first
	byPrio map[int32]*readyLevel
}

type readyLevel struct {
	priority int32
	groups   map[string]*readyGroup
	ring     []*readyGroup // groups with ready jobs, in round-robin order
	next     int           // the ring index served next
	current  int64         // smooth weighted round-robin
}

type readyGroup struct {
	name string
	jobs *btree.BTreeG[jobRef] // by push order
}

func newReadySet() readySet {
	return readySet{
		levels: btree.NewBTreeGOptions(func(a, b *readyLevel) bool { return a.priority > b.priority },
			btree.Options{NoLocks: true}),
		byPrio: map[int32]*readyLevel{},
	}
}

func (rs *readySet) add(n *queueNode) {
	j := &n.val
	l := rs.byPrio[j.priority]
	if l == nil {
		l = &readyLevel{priority: j.priority, groups: map[string]*readyGroup{}}
		rs.byPrio[j.priority] = l
		rs.levels.Set(l)
	}
	name := j.group()
	g := l.groups[name]
	if g == nil {
		g = &readyGroup{name: name, jobs: btree.NewBTreeGOptions(jobRefLess, btree.Options{NoLocks: true})}
		l.groups[name] = g
		l.ring = append(l.ring, g)
	}
	g.jobs.Set(jobRef{j.seq, n})
}

func (rs *readySet) remove(n *queueNode) {
	j := &n.val
	l := rs.byPrio[j.priority]
	g := l.groups[j.group()]
	g.jobs.Delete(jobRef{j.seq, n})
	if g.jobs.Len() > 0 {
		return
	}
	delete(l.groups, g.name)
	i := slices.Index(l.ring, g)
	l.ring = slices.Delete(l.ring, i, i+1)
	if i < l.next {
		l.next--
	}
	if l.next >= len(l.ring) {
		l.next = 0
	}
	if len(l.ring) == 0 {
		delete(rs.byPrio, l.priority)
		rs.levels.Delete(l)
	}
}

// picker chooses ready jobs in service order. For POPACK it takes them
// (the caller moves each out of the ready set before the next pick); for
// PEEK it only simulates, keeping its own cursors and round-robin state so
// the queue is left as it was.
type picker struct {
	rs      *readySet
	weights map[int64]int64 // nil: strict priority
	skip    func(group string) bool
	sim     bool
	after   map[*readyGroup]uint64 // sim: the last push taken from a group
	current map[*readyLevel]int64  // sim: weighted round-robin state
	nextIdx map[*readyLevel]int    // sim: round-robin position
}

func (p *picker) head(g *readyGroup) (jobRef, bool) {
	if !p.sim {
		return g.jobs.Min()
	}
	after, started := p.after[g]
	var out jobRef
	ok := false
	visit := func(r jobRef) bool { out, ok = r, true; return false }
	if started {
		g.jobs.Ascend(jobRef{key: after + 1}, visit)
	} else {
		g.jobs.Scan(visit)
	}
	return out, ok
}

func (p *picker) nextOf(l *readyLevel) int {
	if p.sim {
		if i, ok := p.nextIdx[l]; ok {
			return i
		}
	}
	return l.next
}

func (p *picker) setNext(l *readyLevel, i int) {
	if p.sim {
		p.nextIdx[l] = i
		return
	}
	l.next = i
}

func (p *picker) currentOf(l *readyLevel) int64 {
	if p.sim {
		if c, ok := p.current[l]; ok {
			return c
		}
	}
	return l.current
}

func (p *picker) setCurrent(l *readyLevel, c int64) {
	if p.sim {
		p.current[l] = c
		return
	}
	l.current = c
}

// groupIn is the group level l serves next, and its ring index.
func (p *picker) groupIn(l *readyLevel) (int, *readyGroup) {
	start := p.nextOf(l)
	for i := range l.ring {
		idx := (start + i) % len(l.ring)
		g := l.ring[idx]
		if p.skip != nil && p.skip(g.name) {
			continue
		}
		if _, ok := p.head(g); ok {
			return idx, g
		}
	}
	return -1, nil
}

// weight is a level's share in weighted service: its configured weight, 1
// for a priority WEIGHTS does not name.
func (p *picker) weight(l *readyLevel) int64 {
	if w, ok := p.weights[int64(l.priority)]; ok {
		return w
	}
	return 1
}

// pick returns the job served next, or nil when none can be.
func (p *picker) pick() *queueNode {
	var best *readyLevel
	var bestG *readyGroup
	bestIdx := 0
	if p.weights == nil {
		p.rs.levels.Scan(func(l *readyLevel) bool {
			if idx, g := p.groupIn(l); g != nil {
				best, bestIdx, bestG = l, idx, g
				return false
			}
			return true
		})
	} else {
		var total, bestCur int64
		p.rs.levels.Scan(func(l *readyLevel) bool {
			idx, g := p.groupIn(l)
			if g == nil {
				return true
			}
			w := p.weight(l)
			cur := p.currentOf(l) + w
			p.setCurrent(l, cur)
			total += w
			if best == nil || cur > bestCur {
				best, bestIdx, bestG, bestCur = l, idx, g, cur
			}
			return true
		})
		if best != nil {
			p.setCurrent(best, bestCur-total)
		}
	}
	if best == nil {
		return nil
	}
	ref, _ := p.head(bestG)
	p.setNext(best, (bestIdx+1)%len(best.ring))
	if p.sim {
		p.after[bestG] = ref.key
	}
	return ref.n
}

func newPeeker(rs *readySet, weights map[int64]int64) *picker {
	return &picker{rs: rs, weights: weights, sim: true, after: map[*readyGroup]uint64{},
		current: map[*readyLevel]int64{}, nextIdx: map[*readyLevel]int{}}
}

// tokenBucket is RATE n per-ms: up to n deliveries at once, refilled at n
// per per-ms. units counts tokens times per, so the refill stays integral.
type tokenBucket struct {
	units int64
	at    int64 // unix ms of the last refill
}

func (b *tokenBucket) reset(n int64) { b.units, b.at = 0, 0 }

// available refills the bucket to now and returns the whole tokens in it.
func (b *tokenBucket) available(now, n, per int64) int64 {
	if b.at == 0 {
		b.units, b.at = n*per, now
	}
	if elapsed := now - b.at; elapsed > 0 {
		b.units = min(b.units+min(elapsed, per)*n, n*per)
		b.at = now
	}
	return b.units / per
}

func (b *tokenBucket) take(k, per int64) { b.units -= k * per }

// nextToken is when the next whole token is in the bucket (after
// available has refilled it to now).
func (b *tokenBucket) nextToken(now, n, per int64) int64 {
	if b.units >= per {
		return now
	}
	return now + (per-b.units+n-1)/n
}

// index puts a job in the structure its state belongs to; unindex takes it
// out. Every change of state is unindex, change, index.
func (q *Queue) index(n *queueNode) {
	j := &n.val
	switch j.state {
	case jobReady:
		q.ready.add(n)
	case jobDelayed:
		q.timeline.Set(queueEvent{when: j.due, kind: eventRipen, seq: j.seq, n: n})
	case jobInflight:
		q.timeline.Set(queueEvent{when: j.due, kind: eventLease, seq: j.seq, n: n})
		q.groupInflight(j.group(), 1)
	case jobDead:
		q.dead.Set(jobRef{j.ext.deadSeq, n})
	}
	if x := j.ext; x != nil && x.expireAt != 0 && j.state != jobDead {
		q.timeline.Set(queueEvent{when: x.expireAt, kind: eventExpire, seq: j.seq, n: n})
	}
}

func (q *Queue) unindex(n *queueNode) {
	j := &n.val
	switch j.state {
	case jobReady:
		q.ready.remove(n)
	case jobDelayed:
		q.timeline.Delete(queueEvent{when: j.due, kind: eventRipen, seq: j.seq, n: n})
	case jobInflight:
		q.timeline.Delete(queueEvent{when: j.due, kind: eventLease, seq: j.seq, n: n})
		q.groupInflight(j.group(), -1)
	case jobDead:
		q.dead.Delete(jobRef{j.ext.deadSeq, n})
	}
	if x := j.ext; x != nil && x.expireAt != 0 && j.state != jobDead {
		q.timeline.Delete(queueEvent{when: x.expireAt, kind: eventExpire, seq: j.seq, n: n})
	}
}

// groupInflight counts a group's jobs in flight (GROUP-MAXINFLIGHT).
func (q *Queue) groupInflight(g string, d int) {
	if q.inflightByGroup == nil {
		q.inflightByGroup = map[string]int{}
	}
	if c := q.inflightByGroup[g] + d; c > 0 {
		q.inflightByGroup[g] = c
	} else {
		delete(q.inflightByGroup, g)
	}
}

// move changes a job's state, keeping the indexes and counts.
func (q *Queue) move(n *queueNode, to jobState, due int64) {
	q.unindex(n)
	q.shift(n.val.state, -1)
	n.val.state, n.val.due = to, due
	q.shift(to, 1)
	q.index(n)
}

func sortedPriorities(w map[int64]int64) []int64 {
	ps := make([]int64, 0, len(w))
	for p := range w {
		ps = append(ps, p)
	}
	slices.Sort(ps)
	return ps
}
