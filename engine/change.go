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
	// PutExpire records the key's absolute deadline (unix ms).
	PutExpire(db int, key []byte, at int64)
	// DeleteExpire removes the key's deadline.
	DeleteExpire(db int, key []byte)
	// PutItem writes one sub-record of a composite value.
	PutItem(db int, key []byte, item []byte, val []byte)
	// DeleteItem removes one sub-record.
	DeleteItem(db int, key []byte, item []byte)
	// DeleteKey removes the key's value and expiry records, and with
	// items set all its sub-records too.
	DeleteKey(db int, key []byte, items bool)
	// FlushDB removes every key of one database; FlushAll of all.
	FlushDB(db int)
	FlushAll()
}

// Loader is how persistence feeds records back at start-up. As with
// ChangeSink, the slices are only valid during the call: implementations copy
// what they keep.
type Loader interface {
	LoadValue(db int, key []byte, t Type, payload []byte) error
	LoadExpire(db int, key []byte, at int64) error
	LoadItem(db int, key []byte, item []byte, val []byte) error
}

type nopSink struct{}

func (nopSink) PutValue(int, []byte, Type, []byte)  {}
func (nopSink) PutExpire(int, []byte, int64)        {}
func (nopSink) DeleteExpire(int, []byte)            {}
func (nopSink) PutItem(int, []byte, []byte, []byte) {}
func (nopSink) DeleteItem(int, []byte, []byte)      {}
func (nopSink) DeleteKey(int, []byte, bool)         {}
func (nopSink) FlushDB(int)                         {}
func (nopSink) FlushAll()                           {}
