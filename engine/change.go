package engine

// ChangeSink receives every change to the keyspace, in execution order and
// under the engine lock, as the records a restart replays: a key's value
// record, its expiry, and the sub-records (items) of composite types. The
// persistence writer implements it by copying the bytes into its open batch;
// slices passed in are only valid during the call.
type ChangeSink interface {
	// PutValue writes a key's value record: its type and the type's payload
	// (the whole value for strings, the header for composite types).
	PutValue(db int, key []byte, t Type, payload []byte)
	// PatchValue overwrites len(data) bytes of a string value's payload at
	// off, growing it if they end past its length (with zeros before off
	// if that is past it too): the few registers a PFADD raised in a dense
	// HyperLogLog, the count PFCOUNT caches in its header, a bit SETBIT
	// set in a long bitmap, what APPEND added, instead of the whole value.
	PatchValue(db int, key []byte, off int, data []byte)
	// PutExpire records the key's absolute deadline (unix ms).
	PutExpire(db int, key []byte, at int64)
	// DeleteExpire removes the key's deadline.
	DeleteExpire(db int, key []byte)
	// PutItem writes one sub-record of a composite value.
	PutItem(db int, key []byte, item []byte, val []byte)
	// DeleteItem removes one sub-record.
	DeleteItem(db int, key []byte, item []byte)
	// DeleteItemRange removes the sub-records whose item keys are in
	// [from, to) in byte order: a run of popped list positions is one
	// operation for the store instead of one per element.
	DeleteItemRange(db int, key []byte, from, to []byte)
	// DeleteKey removes the key's value and expiry records, and with
	// items set all its sub-records too.
	DeleteKey(db int, key []byte, items bool)
	// FlushDB removes every key of one database; FlushAll of all.
	FlushDB(db int)
	FlushAll()
	// PutServer writes a server record: state that belongs to no
	// database (function libraries), which FLUSHALL leaves alone.
	PutServer(name, val []byte)
	// DeleteServer removes a server record.
	DeleteServer(name []byte)
}

// Loader is how persistence feeds records back at start-up. As with
// ChangeSink, the slices are only valid during the call: implementations copy
// what they keep.
type Loader interface {
	LoadValue(db int, key []byte, t Type, payload []byte) error
	LoadExpire(db int, key []byte, at int64) error
	LoadItem(db int, key []byte, item []byte, val []byte) error
	LoadServer(name, val []byte) error
}

type nopSink struct{}

func (nopSink) PutValue(int, []byte, Type, []byte)          {}
func (nopSink) PatchValue(int, []byte, int, []byte)         {}
func (nopSink) PutExpire(int, []byte, int64)                {}
func (nopSink) DeleteExpire(int, []byte)                    {}
func (nopSink) PutItem(int, []byte, []byte, []byte)         {}
func (nopSink) DeleteItem(int, []byte, []byte)              {}
func (nopSink) DeleteItemRange(int, []byte, []byte, []byte) {}
func (nopSink) DeleteKey(int, []byte, bool)                 {}
func (nopSink) FlushDB(int)                                 {}
func (nopSink) FlushAll()                                   {}
func (nopSink) PutServer([]byte, []byte)                    {}
func (nopSink) DeleteServer([]byte)                         {}

// coalescingSink forwards to the persistence sink, holding back the
// whole-value record of a string changed in place (INCR, APPEND, PFADD, a
// PFCOUNT cache write-back) until anything else is recorded or the engine
// lock is released. Sixteen pipelined PFADDs on one 12 KB sketch then write
// one record, not sixteen; the log still holds every state another client
// or a restart could observe, in execution order.
type coalescingSink struct {
	ChangeSink
	pending bool
	db      int
	key     []byte
	obj     Object // the held value, or nil for a copy of a string in val
	val     []byte
	// written estimates the bytes the value and item records put since
	// start-up: the memory meter's view of growth (evict_mem.go).
	written int64
}

// defer holds back obj's value record, writing any other held record first.
func (c *coalescingSink) deferValue(db int, key []byte, obj Object) {
	if c.pending && (c.db != db || string(c.key) != string(key) || c.obj != obj) {
		c.flush()
	}
	c.pending, c.db, c.obj = true, db, obj
	c.key = append(c.key[:0], key...)
}

// deferString holds back a string value record as a copy of val: a string
// kept in its key's record has no object to hold.
func (c *coalescingSink) deferString(db int, key []byte, val []byte) {
	if c.pending && (c.db != db || string(c.key) != string(key) || c.obj != nil) {
		c.flush()
	}
	c.pending, c.db, c.obj = true, db, nil
	c.key = append(c.key[:0], key...)
	c.val = append(c.val[:0], val...)
}

// flush writes the held record, if any.
func (c *coalescingSink) flush() {
	if !c.pending {
		return
	}
	c.pending = false
	obj := c.obj
	c.obj = nil
	if obj == nil {
		c.putInline(c.db, c.key, c.val)
		return
	}
	obj.persist(c, c.db, c.key)
}

// putInline records the value of a string kept in its key's record: its
// memory is the keyspace's, which the memory meter reads exactly, so it
// does not count in written.
func (c *coalescingSink) putInline(db int, key []byte, val []byte) {
	c.flush()
	c.ChangeSink.PutValue(db, key, TypeString, val)
}

func (c *coalescingSink) PutValue(db int, key []byte, t Type, payload []byte) {
	c.written += int64(len(key)+len(payload)) + valueRecordOverhead
	c.flush()
	c.ChangeSink.PutValue(db, key, t, payload)
}

// PatchValue is covered by a held value of the same key, which is written
// later as it is then (a held copy is not: it is written first).
func (c *coalescingSink) PatchValue(db int, key []byte, off int, data []byte) {
	if c.pending && c.obj != nil && c.db == db && string(c.key) == string(key) {
		return
	}
	c.written += int64(len(data))
	c.flush()
	c.ChangeSink.PatchValue(db, key, off, data)
}

func (c *coalescingSink) PutExpire(db int, key []byte, at int64) {
	c.flush()
	c.ChangeSink.PutExpire(db, key, at)
}

func (c *coalescingSink) DeleteExpire(db int, key []byte) {
	c.flush()
	c.ChangeSink.DeleteExpire(db, key)
}

func (c *coalescingSink) PutItem(db int, key []byte, item []byte, val []byte) {
	c.written += int64(len(item)+len(val)) + itemRecordOverhead
	c.flush()
	c.ChangeSink.PutItem(db, key, item, val)
}

func (c *coalescingSink) DeleteItem(db int, key []byte, item []byte) {
	c.flush()
	c.ChangeSink.DeleteItem(db, key, item)
}

func (c *coalescingSink) DeleteItemRange(db int, key []byte, from, to []byte) {
	c.flush()
	c.ChangeSink.DeleteItemRange(db, key, from, to)
}

func (c *coalescingSink) DeleteKey(db int, key []byte, items bool) {
	c.flush()
	c.ChangeSink.DeleteKey(db, key, items)
}

func (c *coalescingSink) FlushDB(db int) {
	c.flush()
	c.ChangeSink.FlushDB(db)
}

func (c *coalescingSink) FlushAll() {
	c.flush()
	c.ChangeSink.FlushAll()
}

func (c *coalescingSink) PutServer(name, val []byte) {
	c.flush()
	c.ChangeSink.PutServer(name, val)
}

func (c *coalescingSink) DeleteServer(name []byte) {
	c.flush()
	c.ChangeSink.DeleteServer(name)
}
