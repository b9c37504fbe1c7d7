package engine

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/tidwall/btree"
)

// Numpool is a NUMPOOL key: a pool of numbers (seed 003's outbound caller
// numbers), each in one of the states of SPEC.md §2's table, changed by
// events (numpool_db.go). Numbers are found by name in a Dict; the idle+up
// ones are also indexed for the picks of a call without a number, in the
// order they became idle+up (fifo, and random by rank) and by the end of
// their last call (lru), for the whole pool and for each tag. Busy numbers
// with a lease are ordered by its end, and the key has one scheduler entry
// at the earliest, as a DELAY or QUEUE key has.
type Numpool struct {
	objHeader
	numbers *Dict[poolNumber]
	idle    idleSet
	tags    map[string]*tagPool
	leases  *btree.BTreeG[*numNode] // busy numbers with a lease, by its end
	counts  [numStates]int
	// total is the engine's per-state sum over every attached pool (INFO
	// numpool), kept with counts; nil while the pool is not stored.
	total *[numStates]int64
	calls int64 // the numbers' calls, summed
	// leaseEnds counts the calls a lease hung up (persisted).
	leaseEnds int64
	// clock hands out marks (poolNumber.mark): call tokens and places in
	// fifo order, from one counter that only rises. clockCeil is the
	// persisted bound it stays below, raised a block at a time, so a
	// restart never hands a token out twice; metaDirty says the value
	// record must be written.
	clock, clockCeil uint64
	metaDirty        bool
	armed            int64 // the When of the key's scheduler entry (0: none)
	keyB, tagB       int
	loaded           []*numNode // numbers loaded at start-up, indexed when the load ends
}

// NumState is a number's state. Nodata is a number not in the pool.
type NumState uint8

const (
	NumNodata NumState = iota
	NumIdleUp
	NumIdleDown
	NumBusyUp
	NumBusyDown
	numStates
)

var numStateNames = [numStates]string{"nodata", "idle+up", "idle+down", "busy+up", "busy+down"}

func (s NumState) String() string { return numStateNames[s] }

// NumStates lists the states a number in a pool can be in (INFO order).
var NumStates = []NumState{NumIdleUp, NumIdleDown, NumBusyUp, NumBusyDown}

func (s NumState) busy() bool { return s == NumBusyUp || s == NumBusyDown }
func (s NumState) up() bool   { return s == NumIdleUp || s == NumBusyUp }

// NumEvent is an event on a number.
type NumEvent uint8

const (
	NumAdd NumEvent = iota
	NumDel
	NumReg
	NumUnreg
	NumCall
	NumHangup
	numEvents
)

var numEventNames = [numEvents]string{"add", "del", "reg", "unreg", "call", "hangup"}

func (e NumEvent) String() string { return numEventNames[e] }

// ParseNumEvent reads an event name, in any case.
func ParseNumEvent(s []byte) (NumEvent, bool) {
	for i, n := range numEventNames {
		if len(s) == len(n) && asciiEqualFold(s, n) {
			return NumEvent(i), true
		}
	}
	return 0, false
}

func asciiEqualFold(b []byte, s string) bool {
	for i := range b {
		c := b[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != s[i] {
			return false
		}
	}
	return true
}

// The transition table (SPEC.md §2): the state an event leads to, or
// numSame (the state stays, the event succeeds) or numRefused.
const (
	numSame    NumState = 0xfe
	numRefused NumState = 0xff
)

var numTransitions = [numStates][numEvents]NumState{
	//              add          del        reg          unreg        call        hangup
	NumNodata:   {NumIdleDown, numSame, numRefused, numRefused, numRefused, numRefused},
	NumIdleUp:   {numSame, NumNodata, numSame, NumIdleDown, NumBusyUp, numRefused},
	NumIdleDown: {numSame, NumNodata, NumIdleUp, numSame, numRefused, numRefused},
	NumBusyUp:   {numSame, NumNodata, numSame, NumBusyDown, numRefused, NumIdleUp},
	NumBusyDown: {numSame, NumNodata, NumBusyUp, numSame, numRefused, NumIdleDown},
}

// poolNumber is one number. Sized so that its Dict node is 80 bytes (a
// size class of Go's allocator; 8 more and it would take 96).
type poolNumber struct {
	// mark is a value of the pool's clock: while busy, the call's token;
	// while idle+up, its place in fifo order (when it became idle+up).
	// One field serves both, since a number is never both.
	mark      uint64
	callStart int64 // unix ms its last call started (0: never called)
	callEnd   int64 // unix ms its last call ended (0: never called)
	calls     uint32
	state     NumState
	ext       *numberExtra // tags and lease; nil without either
}

type numberExtra struct {
	tags     []string // sorted, no repeats
	leaseEnd int64    // unix ms the current call hangs up by itself (0: none)
}

type numNode = dictNode[poolNumber]

func (n *poolNumber) tagList() []string {
	if n.ext == nil {
		return nil
	}
	return n.ext.tags
}

func (n *poolNumber) leaseEnd() int64 {
	if n.ext == nil {
		return 0
	}
	return n.ext.leaseEnd
}

func (n *poolNumber) extra() *numberExtra {
	if n.ext == nil {
		n.ext = &numberExtra{}
	}
	return n.ext
}

// Policy is how a call without a number picks one.
type Policy uint8

const (
	PolicyLRU    Policy = iota // the number whose last call ended longest ago
	PolicyFIFO                 // in the order numbers became idle+up
	PolicyRandom               // uniformly
)

// idleSet indexes idle+up numbers for picks. The items are the numbers'
// nodes; the fields a tree orders by (mark, callEnd) change only while the
// number is out of the set.
type idleSet struct {
	byEntry *btree.BTreeG[*numNode] // by mark: fifo; random by rank
	byUse   *btree.BTreeG[*numNode] // by callEnd, then mark: lru
}

func byMark(a, b *numNode) bool { return a.val.mark < b.val.mark }

func byUse(a, b *numNode) bool {
	if a.val.callEnd != b.val.callEnd {
		return a.val.callEnd < b.val.callEnd
	}
	return a.val.mark < b.val.mark
}

func byLeaseEnd(a, b *numNode) bool {
	if x, y := a.val.ext.leaseEnd, b.val.ext.leaseEnd; x != y {
		return x < y
	}
	return a.val.mark < b.val.mark
}

func newIdleSet() idleSet {
	opt := btree.Options{NoLocks: true}
	return idleSet{byEntry: btree.NewBTreeGOptions(byMark, opt), byUse: btree.NewBTreeGOptions(byUse, opt)}
}

func (s *idleSet) add(n *numNode) {
	s.byEntry.Set(n)
	s.byUse.Set(n)
}

func (s *idleSet) remove(n *numNode) {
	s.byEntry.Delete(n)
	s.byUse.Delete(n)
}

func (s *idleSet) len() int { return s.byEntry.Len() }

// pick returns the number the policy picks, or nil; rnd(n) draws from
// [0, n).
func (s *idleSet) pick(p Policy, rnd func(int) int) *numNode {
	var n *numNode
	switch p {
	case PolicyFIFO:
		n, _ = s.byEntry.Min()
	case PolicyLRU:
		n, _ = s.byUse.Min()
	case PolicyRandom:
		if l := s.byEntry.Len(); l > 0 {
			n, _ = s.byEntry.GetAt(rnd(l))
		}
	}
	return n
}

// tagPool is a tag's share of the pool: its numbers per state, and its
// idle+up numbers for picks restricted to the tag.
type tagPool struct {
	counts [numStates]int
	idle   idleSet
}

func (t *tagPool) total() int {
	n := 0
	for _, c := range t.counts {
		n += c
	}
	return n
}

func newNumpool() *Numpool {
	return &Numpool{
		numbers: NewDict[poolNumber](),
		idle:    newIdleSet(),
		leases:  btree.NewBTreeGOptions(byLeaseEnd, btree.Options{NoLocks: true}),
	}
}

// TypeNumpool is the type of NUMPOOL keys (TYPE reports "numpool").
// Persisted: never renumber it.
const TypeNumpool Type = 9

// Type is TypeNumpool.
func (p *Numpool) Type() Type { return TypeNumpool }

// Encoding names the structure OBJECT ENCODING reports.
func (p *Numpool) Encoding() string { return "numindex" }

// Len is the number of numbers in the pool.
func (p *Numpool) Len() int { return p.numbers.Len() }

// enter indexes a number in its state: the counts, the idle sets and the
// leases. leave undoes it; a change of state is leave, change, enter.
func (p *Numpool) enter(n *numNode) {
	s := n.val.state
	p.counts[s]++
	if p.total != nil {
		p.total[s]++
	}
	if s == NumIdleUp {
		p.idle.add(n)
	}
	if s.busy() && n.val.leaseEnd() != 0 {
		p.leases.Set(n)
	}
	for _, t := range n.val.tagList() {
		tp := p.tag(t)
		tp.counts[s]++
		if s == NumIdleUp {
			tp.idle.add(n)
		}
	}
}

func (p *Numpool) leave(n *numNode) {
	s := n.val.state
	p.counts[s]--
	if p.total != nil {
		p.total[s]--
	}
	if s == NumIdleUp {
		p.idle.remove(n)
	}
	if s.busy() && n.val.leaseEnd() != 0 {
		p.leases.Delete(n)
	}
	for _, t := range n.val.tagList() {
		tp := p.tags[t]
		tp.counts[s]--
		if s == NumIdleUp {
			tp.idle.remove(n)
		}
		if tp.total() == 0 {
			delete(p.tags, t)
		}
	}
}

// tag returns the tag's share, making it the first time.
func (p *Numpool) tag(t string) *tagPool {
	tp := p.tags[t]
	if tp == nil {
		if p.tags == nil {
			p.tags = map[string]*tagPool{}
		}
		tp = &tagPool{idle: newIdleSet()}
		p.tags[t] = tp
	}
	return tp
}

// tick hands out the clock's next mark, moving the persisted ceiling a
// block ahead when it reaches it.
func (p *Numpool) tick() uint64 {
	p.clock++
	if p.clock >= p.clockCeil {
		p.clockCeil = p.clock + tokenBlock
		p.metaDirty = true
	}
	return p.clock
}

// Per-number overhead: the Dict node, a bucket pointer, and for idle+up
// numbers their two tree items with the trees' slack.
const (
	numNodeBytes = 80 + 12
	numIdleBytes = 2 * 12
)

// MemoryUsage estimates the value's heap bytes.
func (p *Numpool) MemoryUsage() int {
	n := 256 + p.numbers.Len()*numNodeBytes + p.counts[NumIdleUp]*numIdleBytes + p.keyB + p.tagB
	n += p.leases.Len() * (12 + 48)
	for _, tp := range p.tags {
		n += 128 + tp.idle.len()*numIdleBytes
	}
	return n
}

// Clone copies every number in its state with its counters (COPY). Call
// tokens continue from the original's, so a token names one call in
// either pool.
func (p *Numpool) Clone() Object {
	c := newNumpool()
	c.clock, c.clockCeil, c.leaseEnds = p.clock, p.clockCeil, p.leaseEnds
	p.numbers.ForEach(func(num string, v *poolNumber) bool {
		cv := *v
		if v.ext != nil {
			ext := *v.ext
			ext.tags = slices.Clone(v.ext.tags)
			cv.ext = &ext
		}
		c.addLoaded(num, cv)
		return true
	})
	c.indexLoaded()
	return c
}

// The records: the value record holds the clock's ceiling and the lease
// hang-up total; each number is an item record under 'n' and the number.
// Times are absolute, so a lease ends when it would have across a restart.
const (
	numpoolItemNumber = 'n'
	numpoolFormat     = 1
	// numpoolFormatExact adds the clock itself: DUMP, RDB files and full
	// syncs carry it, so that a copy hands out the very tokens the original
	// would. The store keeps the ceiling only, which a restart resumes
	// from so that no token is handed out twice.
	numpoolFormatExact = 2
)

var errBadNumpoolRecord = errors.New("malformed numpool record")

func (p *Numpool) appendMeta(dst []byte) []byte {
	dst = append(dst, numpoolFormat)
	dst = binary.AppendUvarint(dst, p.clockCeil)
	return binary.AppendVarint(dst, p.leaseEnds)
}

// dumpMeta is the value record a copy of the pool carries (rdb_native.go).
func (p *Numpool) dumpMeta() []byte {
	dst := p.appendMeta(nil)
	dst[0] = numpoolFormatExact
	return binary.AppendUvarint(dst, p.clock)
}

func decodeNumpoolMeta(b []byte) (*Numpool, error) {
	if len(b) < 1 || b[0] != numpoolFormat && b[0] != numpoolFormatExact {
		return nil, errBadNumpoolRecord
	}
	r := recordReader{p: b[1:]}
	p := newNumpool()
	p.clockCeil = r.uvarint()
	p.leaseEnds = r.varint()
	p.clock = p.clockCeil
	if b[0] == numpoolFormatExact {
		p.clock = r.uvarint()
	}
	if r.err != nil || len(r.p) != 0 || p.clock > p.clockCeil {
		return nil, errBadNumpoolRecord
	}
	return p, nil
}

// encodeNumber is a number's item record: state and flags, then its
// mark, times and calls, then the optional lease end and tags.
func encodeNumber(dst []byte, v *poolNumber) []byte {
	flags := byte(0)
	if len(v.tagList()) > 0 {
		flags |= 1
	}
	if v.leaseEnd() != 0 {
		flags |= 2
	}
	dst = append(dst, byte(v.state), flags)
	dst = binary.AppendUvarint(dst, v.mark)
	dst = binary.AppendVarint(dst, v.callStart)
	dst = binary.AppendVarint(dst, v.callEnd)
	dst = binary.AppendUvarint(dst, uint64(v.calls))
	if flags&2 != 0 {
		dst = binary.AppendVarint(dst, v.ext.leaseEnd)
	}
	if flags&1 != 0 {
		dst = binary.AppendUvarint(dst, uint64(len(v.ext.tags)))
		for _, t := range v.ext.tags {
			dst = appendBytes(dst, t)
		}
	}
	return dst
}

func decodeNumber(b []byte) (poolNumber, error) {
	var v poolNumber
	if len(b) < 2 || b[0] == byte(NumNodata) || b[0] >= byte(numStates) {
		return v, errBadNumpoolRecord
	}
	v.state = NumState(b[0])
	flags := b[1]
	r := recordReader{p: b[2:]}
	v.mark = r.uvarint()
	v.callStart = r.varint()
	v.callEnd = r.varint()
	calls := r.uvarint()
	if calls > 1<<32-1 {
		return v, errBadNumpoolRecord
	}
	v.calls = uint32(calls)
	if flags&2 != 0 {
		v.extra().leaseEnd = r.varint()
	}
	if flags&1 != 0 {
		nt := r.uvarint()
		if nt > uint64(len(r.p)) {
			return v, errBadNumpoolRecord
		}
		tags := make([]string, 0, nt)
		for range nt {
			tags = append(tags, r.str())
		}
		v.extra().tags = tags
	}
	if r.err != nil || len(r.p) != 0 || flags&^3 != 0 {
		return v, errBadNumpoolRecord
	}
	return v, nil
}

func numberItemKey(dst []byte, num string) []byte {
	return append(append(dst, numpoolItemNumber), num...)
}

// persist writes the value record and every number.
func (p *Numpool) persist(sink ChangeSink, db int, key []byte) {
	sink.PutValue(db, key, TypeNumpool, p.appendMeta(nil))
	var buf []byte
	p.numbers.ForEach(func(num string, v *poolNumber) bool {
		buf = numberItemKey(buf[:0], num)
		item := len(buf)
		buf = encodeNumber(buf, v)
		sink.PutItem(db, key, buf[:item], buf[item:])
		return true
	})
}

func (p *Numpool) hasItems() bool { return true }

func (p *Numpool) loadItem(item, val []byte) error {
	if len(item) < 2 || item[0] != numpoolItemNumber {
		return fmt.Errorf("item %q: %w", item, errBadNumpoolRecord)
	}
	num := string(item[1:])
	v, err := decodeNumber(val)
	if err != nil {
		return fmt.Errorf("number %q: %w", num, err)
	}
	if n := p.numbers.find(num); n != nil {
		p.uncount(n) // a record replayed twice: the last one wins
		n.val = v
		p.count(n)
		return nil
	}
	p.addLoaded(num, v)
	return nil
}

// addLoaded stores a number whose indexes are built later (indexLoaded).
func (p *Numpool) addLoaded(num string, v poolNumber) {
	n, _ := p.numbers.insertNode(num)
	n.val = v
	p.count(n)
	p.loaded = append(p.loaded, n)
}

// indexLoaded indexes the numbers a load or a clone brought in.
func (p *Numpool) indexLoaded() {
	for _, n := range p.loaded {
		p.clock = max(p.clock, n.val.mark)
		p.enter(n)
	}
	p.loaded = nil
	p.clockCeil = max(p.clockCeil, p.clock+1)
}

// count and uncount keep the byte totals and the calls' sum.
func (p *Numpool) count(n *numNode) {
	p.calls += int64(n.val.calls)
	if len(n.key) > dictShortKey {
		p.keyB += roundAlloc(len(n.key))
	}
	p.tagB += tagBytes(n.val.tagList())
}

// tagBytes estimates a number's tags: the extra record and the strings.
func tagBytes(tags []string) int {
	if len(tags) == 0 {
		return 0
	}
	b := 48
	for _, t := range tags {
		b += 16 + roundAlloc(len(t))
	}
	return b
}

func (p *Numpool) uncount(n *numNode) {
	p.calls -= int64(n.val.calls)
	if len(n.key) > dictShortKey {
		p.keyB -= roundAlloc(len(n.key))
	}
	p.tagB -= tagBytes(n.val.tagList())
}

func init() {
	registerType(TypeNumpool, "numpool", func(payload []byte) (Object, error) {
		p, err := decodeNumpoolMeta(payload)
		if err != nil {
			return nil, fmt.Errorf("numpool value record: %w", err)
		}
		return p, nil
	})
}
