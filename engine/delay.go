package engine

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/tidwall/btree"
)

// Delay is a DELAY key: named timers, each with a due time, an optional
// payload and an optional period. Timers are found by member in a Dict and
// kept in due order in a B-tree whose items point at the Dict's nodes, so a
// timer costs one node and one 16-byte tree item. The key holds a single
// entry in the engine's scheduler, at its earliest due time: firing it wakes
// the clients blocked on the key (delay_db.go).
type Delay struct {
	objHeader
	timers *Dict[delayTimer]
	index  *btree.BTreeG[delayRef]
	// leases holds the delivery a leased timer is out on, by member (the
	// Dict's stored key). Only leased timers have one, so the common timer
	// pays nothing for LEASE.
	leases map[string]delayLease
	// armed is the When of the key's scheduler entry (0: none).
	armed int64
	// total is the engine's sum over every attached DELAY key (INFO
	// delay), kept with timers and leases; nil while the key is not stored.
	total *delayTotals
	// payloadBytes and longBytes are the heap bytes of payloads and of
	// members too long to live in their node (MEMORY USAGE).
	payloadBytes int
	longBytes    int
	// unsorted holds the timers loaded at start-up until the load
	// finishes: sorting once and bulk-loading the tree is several times
	// faster than inserting millions of items in member order.
	unsorted []*delayNode
}

// delayTimer is one timer. While it is leased, due is the lease's end: the
// instant it becomes due again unless acknowledged. The payload sits behind
// a pointer (nil: none) so that a timer without one fits, with its Dict
// node, in one 64-byte cache line.
type delayTimer struct {
	due     int64 // unix ms
	period  int64 // ms; 0 for a one-shot timer
	payload *string
}

func newPayload(b []byte) *string {
	s := string(b)
	return &s
}

// payloadSize is the heap a payload takes: its string header and bytes.
func payloadSize(p *string) int {
	if p == nil {
		return 0
	}
	return 16 + roundAlloc(len(*p))
}

// delayLease is the delivery a leased timer is out on: what a redelivery
// repeats (the same due and fires, so a consumer that charges per delivery
// never counts a period twice).
type delayLease struct {
	due   int64
	fires int64
}

type delayNode = dictNode[delayTimer]

// delayRef is a tree item: a timer's due time (copied, so comparisons rarely
// leave the tree's own memory) and its node.
type delayRef struct {
	due int64
	n   *delayNode
}

func delayLess(a, b delayRef) bool {
	if a.due != b.due {
		return a.due < b.due
	}
	return a.n.key < b.n.key
}

// noMember sorts before every member: range scans start from it.
var noMember = &delayNode{}

func newDelay() *Delay {
	return &Delay{
		timers: NewDict[delayTimer](),
		index:  btree.NewBTreeGOptions(delayLess, btree.Options{NoLocks: true}),
	}
}

// Type is TypeDelay.
func (d *Delay) Type() Type { return TypeDelay }

// Encoding names the structure OBJECT ENCODING reports.
func (d *Delay) Encoding() string { return "timerindex" }

// Len is the number of timers, leased ones included.
func (d *Delay) Len() int { return d.timers.Len() }

// Clone copies every timer and lease (COPY); the copy is not scheduled
// until it is stored under a key.
func (d *Delay) Clone() Object {
	c := newDelay()
	d.sortLoaded()
	d.index.Scan(func(r delayRef) bool {
		c.insert(r.n.key, r.n.val)
		return true
	})
	for m, l := range d.leases {
		c.setLease(m, l)
	}
	return c
}

// Per-timer overhead: the Dict node (64 bytes), a tree item with the tree's
// slack, and a bucket pointer.
const delayTimerOverhead = 64 + 24 + 12

// MemoryUsage estimates the value's heap bytes.
func (d *Delay) MemoryUsage() int {
	return 64 + d.Len()*delayTimerOverhead + d.payloadBytes + d.longBytes + len(d.leases)*48
}

// persist writes the value record and one item record per timer.
func (d *Delay) persist(sink ChangeSink, db int, key []byte) {
	sink.PutValue(db, key, TypeDelay, nil)
	var buf []byte
	d.timers.ForEach(func(m string, t *delayTimer) bool {
		buf = d.encodeTimer(buf[:0], m, t)
		sink.PutItem(db, key, bytesOf(m), buf)
		return true
	})
}

func (d *Delay) hasItems() bool { return true }

// The item record: a flags byte, the due time, the period, for a leased
// timer the delivery it is out on, then the payload. Times are absolute, so
// a restart keeps every deadline (and every lease's) where it was.
const (
	recordPayload = 1 << iota
	recordLeased
)

func (d *Delay) encodeTimer(dst []byte, member string, t *delayTimer) []byte {
	flags := byte(0)
	if t.payload != nil {
		flags |= recordPayload
	}
	l, leased := d.leases[member]
	if leased {
		flags |= recordLeased
	}
	dst = append(dst, flags)
	dst = binary.AppendVarint(dst, t.due)
	dst = binary.AppendUvarint(dst, uint64(t.period))
	if leased {
		dst = binary.AppendVarint(dst, l.due)
		dst = binary.AppendUvarint(dst, uint64(l.fires))
	}
	if t.payload != nil {
		dst = append(dst, *t.payload...)
	}
	return dst
}

var errBadTimerRecord = errors.New("malformed delay timer record")

func decodeTimer(val []byte) (t delayTimer, l delayLease, leased bool, err error) {
	if len(val) < 1 {
		return t, l, false, errBadTimerRecord
	}
	flags, p := val[0], val[1:]
	next := func(signed bool) int64 {
		var v int64
		var n int
		if signed {
			v, n = binary.Varint(p)
		} else {
			var u uint64
			u, n = binary.Uvarint(p)
			v = int64(u)
		}
		if n <= 0 || v < 0 {
			err = errBadTimerRecord
			return 0
		}
		p = p[n:]
		return v
	}
	t.due = next(true)
	t.period = next(false)
	if leased = flags&recordLeased != 0; leased {
		l.due = next(true)
		l.fires = next(false)
	}
	if err != nil {
		return t, l, false, err
	}
	if flags&recordPayload != 0 {
		t.payload = newPayload(p)
	} else if len(p) != 0 {
		return t, l, false, errBadTimerRecord
	}
	return t, l, leased, nil
}

func (d *Delay) loadItem(item, val []byte) error {
	t, l, leased, err := decodeTimer(val)
	if err != nil {
		return fmt.Errorf("timer %q: %w", item, err)
	}
	n := d.timers.find(str(item))
	switch {
	case n == nil:
		n, _ = d.timers.insertNode(str(item))
		if len(n.key) > dictShortKey {
			d.longBytes += roundAlloc(len(n.key))
		}
		d.unsorted = append(d.unsorted, n)
		d.store(n, t)
	default:
		// A record replayed twice: the last one wins. The node waits in
		// unsorted, or is in the tree if it was built already.
		d.dropLease(n.key)
		if _, inTree := d.index.Delete(delayRef{n.val.due, n}); inTree {
			d.index.Set(delayRef{t.due, n})
		}
		d.store(n, t)
	}
	if leased {
		d.setLease(n.key, l)
	}
	return nil
}

// sortLoaded builds the tree from the timers loaded since the last call.
func (d *Delay) sortLoaded() {
	if d.unsorted == nil {
		return
	}
	refs := make([]delayRef, len(d.unsorted))
	for i, n := range d.unsorted {
		refs[i] = delayRef{n.val.due, n}
	}
	d.unsorted = nil
	if d.index.Len() == 0 {
		slices.SortFunc(refs, func(a, b delayRef) int {
			if delayLess(a, b) {
				return -1
			}
			if delayLess(b, a) {
				return 1
			}
			return 0
		})
		for _, r := range refs {
			d.index.Load(r)
		}
		return
	}
	for _, r := range refs {
		d.index.Set(r)
	}
}

// TypeDelay is the type of DELAY keys (TYPE reports "delay"). Persisted:
// never renumber it.
const TypeDelay Type = 7

func init() {
	registerType(TypeDelay, "delay", func(payload []byte) (Object, error) {
		if len(payload) != 0 {
			return nil, fmt.Errorf("bad delay value record %x", payload)
		}
		return newDelay(), nil
	})
}

// store writes t into a node, keeping the byte counts.
func (d *Delay) store(n *delayNode, t delayTimer) {
	d.payloadBytes += payloadSize(t.payload) - payloadSize(n.val.payload)
	n.val = t
}

// insert adds a timer known to be absent and returns its node.
func (d *Delay) insert(member string, t delayTimer) *delayNode {
	n, _ := d.timers.insertNode(member)
	if len(n.key) > dictShortKey {
		d.longBytes += roundAlloc(len(n.key))
	}
	d.store(n, t)
	d.index.Set(delayRef{t.due, n})
	if d.total != nil {
		d.total.timers++
	}
	return n
}

// remove deletes a timer and its lease.
func (d *Delay) remove(n *delayNode) {
	d.index.Delete(delayRef{n.val.due, n})
	d.dropLease(n.key)
	d.store(n, delayTimer{})
	if len(n.key) > dictShortKey {
		d.longBytes -= roundAlloc(len(n.key))
	}
	d.timers.Delete(n.key)
	if d.total != nil {
		d.total.timers--
	}
}

// reschedule moves a timer to a new due time.
func (d *Delay) reschedule(n *delayNode, due int64) {
	if n.val.due == due {
		return
	}
	d.index.Delete(delayRef{n.val.due, n})
	n.val.due = due
	d.index.Set(delayRef{due, n})
}

func (d *Delay) setLease(member string, l delayLease) {
	if d.leases == nil {
		d.leases = map[string]delayLease{}
	}
	if _, ok := d.leases[member]; !ok && d.total != nil {
		d.total.leased++
	}
	d.leases[member] = l
}

func (d *Delay) dropLease(member string) {
	if _, ok := d.leases[member]; ok {
		delete(d.leases, member)
		if d.total != nil {
			d.total.leased--
		}
	}
}

// delayTotals are the timers and leased timers of every attached DELAY key.
type delayTotals struct{ timers, leased int64 }

// joinTotals adds the key's timers and leases to t, which then follows
// every change; leaveTotals takes them out again.
func (d *Delay) joinTotals(t *delayTotals) {
	t.timers += int64(d.Len())
	t.leased += int64(len(d.leases))
	d.total = t
}

func (d *Delay) leaveTotals() {
	d.total.timers -= int64(d.Len())
	d.total.leased -= int64(len(d.leases))
	d.total = nil
}

// first is the earliest timer, or nil.
func (d *Delay) first() *delayNode {
	d.sortLoaded()
	r, ok := d.index.Min()
	if !ok {
		return nil
	}
	return r.n
}

// FiredTimer is one timer a pop delivered.
type FiredTimer struct {
	Member  string
	Payload []byte // nil when the timer has none
	Due     int64  // the due time delivered (unix ms)
	Fires   int64  // periods the delivery covers (1 for a one-shot timer)
	// ready is when the timer became deliverable (its due time, or for a
	// redelivery its lease's end), and redelivered whether a lease ran out
	// on it: INFO delay's lateness and counters.
	ready       int64
	redelivered bool
}

// TimerDue is a member and its due time (DELAY.NEXT, DELAY.RANGE).
type TimerDue struct {
	Member string
	Due    int64
}

// pop delivers up to count timers due at now, earliest first. With lease
// > 0 each stays, leased until now+lease; without, a one-shot timer goes
// and a recurring one is re-armed a whole number of periods after its due
// time (fixed rate). changed receives every timer that changed, and removed
// every one that left, for the change records.
//
// due and out are scratch space the caller reuses between calls; the
// result is out's storage.
func (d *Delay) pop(now int64, count int, lease int64, due []*delayNode, out []FiredTimer,
	changed, removed func(n *delayNode)) ([]*delayNode, []FiredTimer) {
	d.sortLoaded()
	// Take the due timers first, then deliver them: a recurring timer
	// re-armed into the past is due again, but not in this same reply.
	due, out = due[:0], out[:0]
	d.index.Scan(func(r delayRef) bool {
		if r.due > now || len(due) == count {
			return false
		}
		due = append(due, r.n)
		return true
	})
	for _, n := range due {
		t := &n.val
		l, redelivery := d.leases[n.key]
		if !redelivery {
			l = delayLease{due: t.due, fires: 1}
			if t.period > 0 {
				l.fires += (now - t.due) / t.period
			}
		}
		f := FiredTimer{Member: n.key, Due: l.due, Fires: l.fires, ready: t.due, redelivered: redelivery}
		if t.payload != nil {
			f.Payload = bytesOf(*t.payload)
			if f.Payload == nil {
				f.Payload = []byte{}
			}
		}
		switch {
		case lease > 0:
			d.setLease(n.key, l)
			d.reschedule(n, now+lease)
			changed(n)
		case t.period > 0:
			d.dropLease(n.key)
			d.reschedule(n, l.due+l.fires*t.period)
			changed(n)
		default:
			// The delivery keeps the member and payload strings; the node
			// they point into is no longer reachable from the key.
			removed(n)
			d.remove(n)
		}
		out = append(out, f)
	}
	clear(due) // the scratch space must not keep removed nodes alive
	return due, out
}

// ack settles the lease of a timer: a one-shot timer goes, a recurring one
// is next due a whole number of periods after the delivered due time. It
// reports false when the timer is not leased.
func (d *Delay) ack(n *delayNode) (removedTimer, ok bool) {
	l, ok := d.leases[n.key]
	if !ok {
		return false, false
	}
	if n.val.period == 0 {
		d.remove(n)
		return true, true
	}
	d.dropLease(n.key)
	d.reschedule(n, l.due+l.fires*n.val.period)
	return false, true
}
