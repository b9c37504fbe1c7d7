package engine

import (
	"github.com/revolver-db/revolver/flat"
)

// keyspace is one database's keys (decision 0012): a record per key in
// pointer-free flat memory, holding the key, its deadline, its LRU/LFU clock
// and, for strings, the value itself; values that stay Go objects
// (collections, streams, the native families' values) sit in objs, which
// their records reference by index. The collector never scans a string key.
type keyspace struct {
	recs *flat.Keyspace
	objs []Object
	free []uint64 // unused indexes of objs
}

func newKeyspace() *keyspace { return &keyspace{recs: flat.NewKeyspace()} }

// Len is the number of keys.
func (ks *keyspace) Len() int { return ks.recs.Len() }

// The record's type byte: the Type in the low bits and, for a string in
// its record, how OBJECT ENCODING names it and whether COPY made it.
const (
	recTypeMask = 0x1f
	recEncShift = 5
	recEncMask  = 3 << recEncShift
	recPrivate  = 0x80
)

// inlineStringMax is the longest string kept in its record. Longer ones,
// and bitmaps grown past it, are *String objects, so APPEND and SETBIT
// change them in place instead of rewriting the record.
const inlineStringMax = 4000

// recType is the value type of a record.
func recType(r flat.Record) Type { return Type(r.Type() & recTypeMask) }

// stringTypeByte is the type byte of a string stored in its record.
func stringTypeByte(s *String) uint8 {
	t := uint8(TypeString) | uint8(s.enc)<<recEncShift
	if s.private {
		t |= recPrivate
	}
	return t
}

// inlines reports whether obj is stored in its record.
func inlines(obj Object) (*String, bool) {
	s, ok := obj.(*String)
	return s, ok && len(s.b) <= inlineStringMax
}

// object returns the value of r: the referenced object, or a string
// materialized from the record (a copy: writing it changes nothing until
// it is stored back). Its access field is the record's clock.
func (ks *keyspace) object(r flat.Record) Object {
	var obj Object
	if r.IsRef() {
		obj = ks.objs[r.Ref()]
	} else {
		t := r.Type()
		s := &String{enc: strEnc(t & recEncMask >> recEncShift), private: t&recPrivate != 0}
		s.store(r.Value())
		obj = s
	}
	obj.header().atime = r.Clock()
	return obj
}

// ref returns the object r references, nil for a string in its record.
func (ks *keyspace) ref(r flat.Record) Object {
	if !r.IsRef() {
		return nil
	}
	return ks.objs[r.Ref()]
}

// put writes key's record for obj with clock and deadline. old is key's
// current record (nil when absent), a view put invalidates: a referenced
// object's slot in objs is reused or released.
func (ks *keyspace) put(key []byte, old flat.Record, obj Object, clock uint32, expire int64) {
	if s, ok := inlines(obj); ok {
		ks.putString(key, old, s.b, stringTypeByte(s), clock, expire)
		return
	}
	typ := uint8(obj.Type())
	if old != nil && old.IsRef() {
		oldRef := old.Ref()
		ks.objs[oldRef] = obj
		if old.HasExpire() == (expire != 0) {
			old.SetType(typ)
			old.SetClock(clock)
			old.SetExpire(expire)
			return
		}
		ks.recs.SetRef(key, typ, clock, expire, oldRef)
		return
	}
	ks.recs.SetRef(key, typ, clock, expire, ks.hold(obj))
}

// putString writes a string value straight from val (SET), without a
// *String; typ is its type byte (stringTypeByte). val is at most
// inlineStringMax bytes.
func (ks *keyspace) putString(key []byte, old flat.Record, val []byte, typ uint8, clock uint32, expire int64) {
	if old != nil && !old.IsRef() && len(old.Value()) == len(val) && old.HasExpire() == (expire != 0) {
		copy(old.Value(), val)
		old.SetType(typ)
		old.SetClock(clock)
		old.SetExpire(expire)
		return
	}
	oldRef, hadRef := uint64(0), old != nil && old.IsRef()
	if hadRef {
		oldRef = old.Ref()
	}
	ks.recs.Set(key, typ, clock, expire, val)
	if hadRef {
		ks.release(oldRef)
	}
}

// hold puts obj in objs and returns its index.
func (ks *keyspace) hold(obj Object) uint64 {
	if n := len(ks.free); n > 0 {
		i := ks.free[n-1]
		ks.free = ks.free[:n-1]
		ks.objs[i] = obj
		return i
	}
	ks.objs = append(ks.objs, obj)
	return uint64(len(ks.objs) - 1)
}

// release frees index i of objs.
func (ks *keyspace) release(i uint64) {
	ks.objs[i] = nil
	ks.free = append(ks.free, i)
}

// delete removes key, whose record is r.
func (ks *keyspace) delete(key []byte, r flat.Record) {
	if r.IsRef() {
		ks.release(r.Ref())
	}
	ks.recs.Delete(key)
}

// clear drops every key.
func (ks *keyspace) clear() {
	ks.recs.Clear()
	ks.objs = nil
	ks.free = nil
}

// usage is the memory key's record and value take (MEMORY USAGE): the
// record's slot and share of the index, plus a referenced object and its
// slot in objs.
func (ks *keyspace) usage(r flat.Record) int {
	n := ks.recs.Usage(r)
	if obj := ks.ref(r); obj != nil {
		n += 16 + obj.MemoryUsage()
	}
	return n
}

// KeyspaceMemory sums the keyspaces' flat memory (INFO memory): the
// records' bytes, the slots they take, the pages and blocks held and the
// index, and the number of values kept as objects.
type KeyspaceMemory struct {
	Requested, Allocated, Held, Index int64
	Objects                           int
}

// Fragmentation is held/requested: 1 when every byte held was asked for.
func (m KeyspaceMemory) Fragmentation() float64 {
	if m.Requested == 0 {
		return 1
	}
	return float64(m.Held) / float64(m.Requested)
}

// KeyspaceMemory reports the keyspaces' flat memory. Under the lock.
func (e *Engine) KeyspaceMemory() KeyspaceMemory {
	var m KeyspaceMemory
	for _, db := range e.dbs {
		st := db.keys.recs.Stats()
		m.Requested += st.Arena.Requested
		m.Allocated += st.Arena.Allocated
		m.Held += st.Arena.Held
		m.Index += st.Table.Bytes
		m.Objects += len(db.keys.objs) - len(db.keys.free)
	}
	return m
}

// CompactKeyspaces moves up to about budget bytes of records out of
// sparsely used pages, so that memory freed by deletes goes back in whole
// pages, a little at a time (the cron's) rather than in one pass. It
// returns the bytes moved. Under the lock: records move, so no view may be
// held across it.
func (e *Engine) CompactKeyspaces(budget int) int {
	moved := 0
	for _, db := range e.dbs {
		if moved >= budget {
			break
		}
		if db.keys.Len() > 0 {
			moved += db.keys.recs.Compact(budget - moved)
		}
	}
	return moved
}
