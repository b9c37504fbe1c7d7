package engine

import (
	"slices"
	"strings"
)

// NUMPOOL keys in the keyspace: events and bulk changes, the reads, their
// change records, and the key's one scheduler entry, at the earliest lease
// end. Every operation first hangs up the calls whose lease ended
// (advanceNumpool), so a pool answers as of now even before its entry
// fires. A pool whose last number goes stays, as a QUEUE key does: its
// call-token clock must keep rising, or a late hangup carrying a token
// from before could end a call made after (DEL removes the pool).

// NumRefusedError is an event the transition table forbids.
type NumRefusedError struct {
	Number string
	State  NumState
	Event  NumEvent
}

func (e NumRefusedError) Error() string {
	return "ERR number " + e.Number + " is " + e.State.String() + ": " + e.Event.String() + " not allowed"
}

// StaleTokenError is a hangup whose call token names a call that is over.
type StaleTokenError struct{ Number string }

func (e StaleTokenError) Error() string { return "ERR stale call token for number " + e.Number }

// NumEventArgs are a NUMPOOL.EVENT's number and options.
type NumEventArgs struct {
	Number    []byte
	HasNumber bool
	Policy    Policy // call without a number
	Lease     int64  // call: ms until it hangs up by itself (0: never)
	Tag       string // add: tag the number; call: pick among numbers with it
	HasTag    bool
	Token     uint64 // hangup: the call it must end
	HasToken  bool
}

// NumEventResult is what an event did.
type NumEventResult struct {
	State   NumState // the number's state after the event
	Number  string   // call: the number taken ("" when none was free)
	Token   uint64   // call: its token
	Changed bool     // the pool changed (not a "=" cell, nor a call that found none)
}

// numpoolWrite looks key up for a NUMPOOL command, returning the stored
// key name too; create makes an empty pool when the key is absent.
func (db *DB) numpoolWrite(key []byte, create bool) (string, *Numpool, error) {
	en, found := db.find(key)
	k := str(key)
	if !found {
		if !create {
			return "", nil, nil
		}
		p := newNumpool()
		k = str(key)
		db.Set(key, p, true)
		return k, p, nil
	}
	p, ok := en.obj.(*Numpool)
	if !ok {
		return "", nil, ErrWrongType
	}
	db.touch(en.rec)
	if db.advanceNumpool(k, key, p) {
		db.numpoolDone(k, key, p)
	}
	return k, p, nil
}

// numpoolRead is numpoolWrite for the reading commands, with their
// keyspace hit and miss counts.
func (db *DB) numpoolRead(key []byte) (*Numpool, error) {
	_, p, err := db.numpoolWrite(key, false)
	switch {
	case err != nil:
		return nil, err
	case p == nil:
		db.e.stats.KeyspaceMisses++
	default:
		db.e.stats.KeyspaceHits++
	}
	return p, nil
}

// numpoolDone ends a write to a pool: the value record when it changed,
// the dirty counter and WATCH, and the scheduler entry.
func (db *DB) numpoolDone(k string, key []byte, p *Numpool) {
	if p.metaDirty {
		p.metaDirty = false
		db.e.sink.PutValue(db.id, key, TypeNumpool, p.appendMeta(db.e.recordBuf[:0]))
	}
	db.modified(key)
	db.armNumpool(k, p)
}

func (db *DB) persistNumber(key []byte, n *numNode) {
	e := db.e
	e.recordBuf = numberItemKey(e.recordBuf[:0], n.key)
	item := len(e.recordBuf)
	e.recordBuf = encodeNumber(e.recordBuf, &n.val)
	e.sink.PutItem(db.id, key, e.recordBuf[:item], e.recordBuf[item:])
}

// armNumpool points the key's scheduler entry at the earliest lease end.
func (db *DB) armNumpool(k string, p *Numpool) {
	want := int64(0)
	if n, ok := p.leases.Min(); ok {
		want = max(n.val.ext.leaseEnd, db.e.now+1)
	}
	if want == p.armed {
		return
	}
	db.disarmNumpool(k, p)
	if want != 0 {
		p.armed = want
		db.e.schedule(Timer{When: want, Kind: timerNumpool, DB: uint8(db.phys), Key: k})
	}
}

func (db *DB) disarmNumpool(k string, p *Numpool) {
	if p.armed != 0 {
		db.e.unschedule(Timer{When: p.armed, Kind: timerNumpool, DB: uint8(db.phys), Key: k})
		p.armed = 0
	}
}

// timerNumpool is the kind of a NUMPOOL key's scheduler entry.
var timerNumpool TimerKind

func init() { timerNumpool = registerTimerKind("numpool", (*Engine).fireNumpool) }

// fireNumpool is the scheduler's handler for NUMPOOL keys: it hangs up the
// calls whose lease ended, then re-aims the entry.
func (e *Engine) fireNumpool(t Timer) {
	db := e.timerDB(t)
	k := t.Key
	p, ok := db.rawObject(bytesOf(k)).(*Numpool)
	if !ok || p.armed != t.When {
		return
	}
	p.armed = 0
	key := bytesOf(k)
	if db.advanceNumpool(k, key, p) {
		db.numpoolDone(k, key, p)
		return
	}
	db.armNumpool(k, p)
}

// attached and detached make a NUMPOOL value key-bound (family.go).
func (p *Numpool) attached(db *DB, k string) {
	st := numpoolState.of(db.e)
	st.keys++
	p.indexLoaded()
	p.total = &st.counts
	for s, c := range p.counts {
		st.counts[s] += int64(c)
	}
	db.armNumpool(k, p)
}

func (p *Numpool) detached(db *DB, k string) {
	st := numpoolState.of(db.e)
	st.keys--
	for s, c := range p.counts {
		st.counts[s] -= int64(c)
	}
	p.total = nil
	db.disarmNumpool(k, p)
}

// advanceNumpool hangs up every call whose lease ended by now, at its
// lease's end, recording each number; it reports whether any did.
func (db *DB) advanceNumpool(k string, key []byte, p *Numpool) bool {
	now := db.e.now
	ended := 0
	for {
		n, ok := p.leases.Min()
		if !ok || n.val.ext.leaseEnd > now {
			break
		}
		p.hangup(n, n.val.ext.leaseEnd)
		db.persistNumber(key, n)
		ended++
	}
	if ended == 0 {
		return false
	}
	p.leaseEnds += int64(ended)
	p.metaDirty = true
	numpoolState.of(db.e).leaseEnds += int64(ended)
	db.e.notify(NotifyModule, "numpool.lease-end", db.id, key)
	return true
}

// hangup ends a number's call at the time end: busy+up becomes idle+up
// (entering the idle set last), busy+down idle+down.
func (p *Numpool) hangup(n *numNode, end int64) {
	p.leave(n)
	v := &n.val
	v.state = numTransitions[v.state][NumHangup]
	v.callEnd = end
	if v.ext != nil {
		v.ext.leaseEnd = 0
		if len(v.ext.tags) == 0 {
			v.ext = nil
		}
	}
	if v.state == NumIdleUp {
		v.mark = p.tick()
	}
	p.enter(n)
}

// NumpoolEvent applies one event (NUMPOOL.EVENT).
func (db *DB) NumpoolEvent(key []byte, ev NumEvent, a NumEventArgs) (NumEventResult, error) {
	k, p, err := db.numpoolWrite(key, ev == NumAdd)
	if err != nil {
		return NumEventResult{}, err
	}
	st := numpoolState.of(db.e)
	var n *numNode
	if ev == NumCall && !a.HasNumber {
		if p != nil {
			n = p.pick(a, pickSeed(key, db.e.now, p.clock))
		}
		if n == nil {
			st.noneFree++
			return NumEventResult{}, nil
		}
	} else if p != nil {
		n = p.numbers.find(str(a.Number))
	}
	state := NumNodata
	if n != nil {
		state = n.val.state
	}
	if a.HasToken && (n == nil || !state.busy() || n.val.mark != a.Token) {
		return NumEventResult{}, StaleTokenError{Number: string(a.Number)}
	}
	next := numTransitions[state][ev]
	switch next {
	case numRefused:
		return NumEventResult{}, NumRefusedError{Number: string(a.Number), State: state, Event: ev}
	case numSame:
		if ev == NumAdd && a.HasTag && p.retag(n, []string{a.Tag}) {
			db.persistNumber(key, n)
			db.numpoolDone(k, key, p)
			return NumEventResult{State: state, Changed: true}, nil
		}
		return NumEventResult{State: state}, nil
	}
	res := NumEventResult{State: next, Changed: true}
	now := db.e.now
	switch ev {
	case NumAdd:
		n = p.add(str(a.Number), nil)
		if a.HasTag {
			p.retag(n, []string{a.Tag})
		}
	case NumDel:
		p.del(n)
		db.e.recordBuf = numberItemKey(db.e.recordBuf[:0], n.key)
		db.e.sink.DeleteItem(db.id, key, db.e.recordBuf)
	case NumReg, NumUnreg:
		p.setReg(n, next)
	case NumCall:
		res.Number = n.key
		res.Token = p.call(n, now, a.Lease)
		st.calls++
	case NumHangup:
		p.hangup(n, now)
		st.hangups++
	}
	if ev != NumDel {
		db.persistNumber(key, n)
	}
	db.numpoolDone(k, key, p)
	return res, nil
}

// pick finds the idle+up number a call without a number takes. The random
// policy's choice is drawn from seed, so that a replica applying the same
// call at its master's time picks the same number.
func (p *Numpool) pick(a NumEventArgs, seed uint64) *numNode {
	set := &p.idle
	if a.HasTag {
		tp := p.tags[a.Tag]
		if tp == nil {
			return nil
		}
		set = &tp.idle
	}
	return set.pick(a.Policy, func(n int) int {
		seed += uint64(n) * 0x9e3779b97f4a7c15
		return int(splitmix64(seed) % uint64(n))
	})
}

// pickSeed mixes a pool's key, the time of the call and the pool's mark
// counter (it rises with every call), so picks differ from pool to pool
// and from one call to the next, and a replica applying the same call to
// the same pool at its master's time picks the same.
func pickSeed(key []byte, now int64, marks uint64) uint64 {
	h := uint64(14695981039346656037)
	for _, c := range key {
		h = (h ^ uint64(c)) * 1099511628211
	}
	return h ^ splitmix64(uint64(now)) ^ splitmix64(marks^0x5851f42d4c957f2d)
}

func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// add puts a new number in the pool, idle+down.
func (p *Numpool) add(num string, tags []string) *numNode {
	n, _ := p.numbers.insertNode(num)
	n.val = poolNumber{state: NumIdleDown}
	if len(tags) > 0 {
		n.val.extra().tags = tags
	}
	p.count(n)
	p.enter(n)
	return n
}

// retag adds tags to a number; it reports whether any was new.
func (p *Numpool) retag(n *numNode, tags []string) bool {
	have := n.val.tagList()
	merged := slices.Clone(have)
	for _, t := range tags {
		if i, found := slices.BinarySearch(merged, t); !found {
			merged = slices.Insert(merged, i, t)
		}
	}
	if len(merged) == len(have) {
		return false
	}
	p.leave(n)
	p.uncount(n)
	n.val.extra().tags = merged
	p.count(n)
	p.enter(n)
	return true
}

func (p *Numpool) del(n *numNode) {
	p.leave(n)
	p.uncount(n)
	p.numbers.Delete(n.key)
}

// setReg moves a number to the up or down state next.
func (p *Numpool) setReg(n *numNode, next NumState) {
	p.leave(n)
	n.val.state = next
	if next == NumIdleUp {
		n.val.mark = p.tick()
	}
	p.enter(n)
}

// call makes an idle+up number busy with a new token, and a lease when
// lease > 0; it returns the token.
func (p *Numpool) call(n *numNode, now, lease int64) uint64 {
	p.leave(n)
	v := &n.val
	v.state = NumBusyUp
	v.mark, v.callStart = p.tick(), now
	v.calls++
	p.calls++
	if lease > 0 {
		v.extra().leaseEnd = now + lease
	}
	p.enter(n)
	return v.mark
}

// NumpoolAdd adds numbers (NUMPOOL.ADD), idle+down, and gives them (new or
// not) the tags; it returns how many were new, and whether the pool
// changed (a new number or a new tag).
func (db *DB) NumpoolAdd(key []byte, nums [][]byte, tags []string) (added int, changed bool, err error) {
	k, p, err := db.numpoolWrite(key, true)
	if err != nil {
		return 0, false, err
	}
	tags = slices.Compact(slices.Sorted(slices.Values(tags)))
	for _, num := range nums {
		n := p.numbers.find(str(num))
		switch {
		case n == nil:
			n = p.add(string(num), slices.Clone(tags))
			added++
		case !p.retag(n, tags):
			continue
		}
		changed = true
		db.persistNumber(key, n)
	}
	if changed {
		db.numpoolDone(k, key, p)
	}
	return added, changed, nil
}

// NumpoolReg sets numbers up (reg) or down (unreg) (NUMPOOL.REG, UNREG); it
// returns how many changed state. A number not in the pool refuses the
// whole command.
func (db *DB) NumpoolReg(key []byte, nums [][]byte, up bool) (int, error) {
	ev := NumUnreg
	if up {
		ev = NumReg
	}
	k, p, err := db.numpoolWrite(key, false)
	if err != nil {
		return 0, err
	}
	for _, num := range nums {
		if p == nil || p.numbers.find(str(num)) == nil {
			return 0, NumRefusedError{Number: string(num), State: NumNodata, Event: ev}
		}
	}
	changed := 0
	for _, num := range nums {
		n := p.numbers.find(str(num))
		next := numTransitions[n.val.state][ev]
		if next == numSame {
			continue
		}
		p.setReg(n, next)
		db.persistNumber(key, n)
		changed++
	}
	if changed > 0 {
		db.numpoolDone(k, key, p)
	}
	return changed, nil
}

// NumberInfo describes one number (NUMPOOL.STATE).
type NumberInfo struct {
	State              NumState
	Tags               []string
	Calls              int64
	CallStart, CallEnd int64 // unix ms; 0: never
	LeaseLeft          int64 // ms; -1: no lease
	Token              uint64
}

// NumpoolState describes a number; ok is false when it is not in the pool.
func (db *DB) NumpoolState(key, num []byte) (info NumberInfo, ok bool, err error) {
	p, err := db.numpoolRead(key)
	if p == nil || err != nil {
		return info, false, err
	}
	n := p.numbers.find(str(num))
	if n == nil {
		return info, false, nil
	}
	v := &n.val
	info = NumberInfo{State: v.state, Tags: slices.Clone(v.tagList()), Calls: int64(v.calls),
		CallStart: v.callStart, CallEnd: v.callEnd, LeaseLeft: -1}
	if v.state.busy() {
		info.Token = v.mark
	}
	if end := v.leaseEnd(); end != 0 {
		info.LeaseLeft = max(end-db.e.now, 0)
	}
	return info, true, nil
}

// NumpoolSummary is NUMPOOL.INFO: the numbers per state, in the whole pool
// and per tag (in tag order), the calls the numbers made, and how many
// calls a lease hung up.
type NumpoolSummary struct {
	Counts    [numStates]int64 // by NumState; Counts[NumNodata] is unused
	Numbers   int64
	Calls     int64
	LeaseEnds int64
	Tags      []TagSummary
}

// TagSummary is one tag's numbers per state.
type TagSummary struct {
	Tag    string
	Counts [numStates]int64
}

// NumpoolInfo summarizes a pool; a missing key is an empty pool.
func (db *DB) NumpoolInfo(key []byte) (NumpoolSummary, error) {
	var s NumpoolSummary
	p, err := db.numpoolRead(key)
	if p == nil || err != nil {
		return s, err
	}
	for st, c := range p.counts {
		s.Counts[st] = int64(c)
	}
	s.Numbers, s.Calls, s.LeaseEnds = int64(p.Len()), p.calls, p.leaseEnds
	for _, t := range slices.Sorted(mapKeys(p.tags)) {
		ts := TagSummary{Tag: t}
		for st, c := range p.tags[t].counts {
			ts.Counts[st] = int64(c)
		}
		s.Tags = append(s.Tags, ts)
	}
	return s, nil
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// NumListItem is a number NUMPOOL.LIST returns.
type NumListItem struct {
	Number string
	State  NumState
}

// NumpoolList scans a pool from cursor as SCAN does (Redis's reverse-binary
// cursor: a number present for the whole scan is returned at least once),
// keeping the numbers in state (NumNodata: any) that carry tag (when
// hasTag); it stops after about count numbers were looked at.
func (db *DB) NumpoolList(key []byte, cursor uint64, count int, state NumState, tag string, hasTag bool) (uint64, []NumListItem, error) {
	p, err := db.numpoolRead(key)
	if p == nil || err != nil {
		return 0, nil, err
	}
	var out []NumListItem
	looked := 0
	for {
		cursor = p.numbers.Scan(cursor, func(num string, v *poolNumber) {
			looked++
			if state != NumNodata && v.state != state {
				return
			}
			if hasTag {
				if _, found := slices.BinarySearch(v.tagList(), tag); !found {
					return
				}
			}
			out = append(out, NumListItem{Number: num, State: v.state})
		})
		if cursor == 0 || looked >= count {
			break
		}
	}
	// A page in number order: the same page reads the same on every run,
	// whatever the hash seed.
	slices.SortFunc(out, func(a, b NumListItem) int { return strings.Compare(a.Number, b.Number) })
	return cursor, out, nil
}

// ParseNumState reads a state's name (NUMPOOL.LIST STATE), in any case.
func ParseNumState(s []byte) (NumState, bool) {
	for i, n := range numStateNames {
		if i != int(NumNodata) && len(s) == len(n) && asciiEqualFold(s, n) {
			return NumState(i), true
		}
	}
	return 0, false
}
