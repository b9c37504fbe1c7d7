package engine

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"unsafe"
)

// Hash is a hash value. Like Redis 7.0 it has two forms: a small hash is a
// fieldPack (Redis's listpack: insertion order, linear lookups), and once it
// holds more than hash-max-listpack-entries fields, or a field or value
// longer than hash-max-listpack-value bytes is written, it becomes a Dict
// (Redis's hashtable) for good. OBJECT ENCODING, the order replies come in
// and HSCAN's one-call answer for small hashes all follow from that.
type Hash struct {
	objHeader
	pack fieldPack        // the listpack form, used while dict is nil
	dict *Dict[hashValue] // the hashtable form
	lim  *Limits          // the engine's thresholds (they change with CONFIG SET)
}

// hashValue is a hashtable field's value. Values of up to 8 bytes (counters,
// flags, short codes) live in the node itself, which they fit in without
// growing it out of its 64-byte size class; longer ones are one allocation.
type hashValue struct {
	s     string
	small [8]byte
}

func (v *hashValue) set(b []byte) {
	if len(b) <= len(v.small) {
		n := copy(v.small[:], b)
		if n == 0 {
			v.s = ""
			return
		}
		v.s = unsafe.String(&v.small[0], n)
		return
	}
	v.s = string(b)
}

// inline reports whether the value lives in the node.
func (v *hashValue) inline() bool {
	return len(v.s) > 0 && len(v.s) <= len(v.small) && unsafe.StringData(v.s) == &v.small[0]
}

// hsBytes views an immutable string as bytes; callers must not write to
// the result.
func hsBytes(s string) []byte {
	if len(s) == 0 {
		return []byte{}
	}
	return unsafe.Slice(unsafe.StringData(s), len(s))
}

// hashFormat is the payload of a hash's value record. The fields are item
// records; the encoding is not stored because, as in Redis, a loaded hash
// derives it from its contents and the thresholds in force.
const hashFormat = 1

// Hash errors, with Redis's texts.
var (
	ErrHashNotInt   = errors.New("ERR hash value is not an integer")
	ErrHashNotFloat = errors.New("ERR hash value is not a float")
	// ErrIncrNaNOrInf is HINCRBYFLOAT's reply to an infinite increment.
	ErrIncrNaNOrInf = errors.New("ERR value is NaN or Infinity")
)

// Type implements Object.
func (h *Hash) Type() Type { return TypeHash }

// Encoding implements Object.
func (h *Hash) Encoding() string {
	if h.dict != nil {
		return "hashtable"
	}
	return "listpack"
}

// Len is the number of fields.
func (h *Hash) Len() int {
	if h.dict != nil {
		return h.dict.Len()
	}
	return h.pack.n
}

// Get returns field's value, aliasing the store: copy it before the engine
// lock is released or the hash changes.
func (h *Hash) Get(field []byte) ([]byte, bool) {
	if h.dict != nil {
		v := h.dict.Get(str(field))
		if v == nil {
			return nil, false
		}
		return hsBytes(v.s), true
	}
	return h.pack.get(field)
}

// Has reports whether field exists.
func (h *Hash) Has(field []byte) bool {
	_, ok := h.Get(field)
	return ok
}

// Each calls fn for every field and value (listpack: insertion order).
func (h *Hash) Each(fn func(field, value []byte)) {
	if h.dict != nil {
		h.dict.ForEach(func(k string, v *hashValue) bool {
			fn(hsBytes(k), hsBytes(v.s))
			return true
		})
		return
	}
	h.pack.each(func(f, v []byte) bool {
		fn(f, v)
		return true
	})
}

// Scan continues an HSCAN from cursor and returns the next cursor. A
// listpack hash answers everything at once with cursor 0, as in Redis; a
// hashtable is scanned bucket by bucket until count fields were visited
// (at most count*20 buckets, Redis's bound for a sparse table).
func (h *Hash) Scan(cursor uint64, count int, fn func(field, value []byte)) uint64 {
	if h.dict == nil {
		h.Each(fn)
		return 0
	}
	visited := 0
	cb := func(k string, v *hashValue) {
		visited++
		fn(hsBytes(k), hsBytes(v.s))
	}
	return hsScanDict(h.dict, cursor, count, 2*count*10, &visited, cb)
}

// hsScanDict runs Redis's SCAN loop over d: scan buckets until the cursor
// wraps, maxIter further buckets were scanned, or visited reaches count.
func hsScanDict[V any](d *Dict[V], cursor uint64, count, maxIter int, visited *int, fn func(string, *V)) uint64 {
	for {
		cursor = d.Scan(cursor, fn)
		if cursor == 0 || maxIter == 0 {
			return cursor
		}
		maxIter--
		if *visited >= count {
			return cursor
		}
	}
}

// Random returns one random field and its value (the hash is not empty).
func (h *Hash) Random() (field, value []byte) {
	if h.dict != nil {
		k, v := h.dict.RandomEntry()
		return hsBytes(k), hsBytes(v.s)
	}
	i := rand.IntN(h.pack.n)
	var f, v []byte
	h.pack.each(func(pf, pv []byte) bool {
		if i == 0 {
			f, v = pf, pv
			return false
		}
		i--
		return true
	})
	return f, v
}

// RandomRepeat calls fn count times with a random field each time
// (HRANDFIELD with a negative count: fields may repeat).
func (h *Hash) RandomRepeat(count int64, fn func(field, value []byte)) {
	if h.dict != nil {
		for ; count > 0; count-- {
			fn(h.Random())
		}
		return
	}
	offs := h.pack.offsets(nil)
	for ; count > 0; count-- {
		fn(h.pack.pairAt(offs[rand.IntN(len(offs))]))
	}
}

// RandomDistinct calls fn for count distinct random fields, count being
// less than Len (HRANDFIELD with a positive count; a larger count is the
// whole hash, which Each serves in storage order as Redis does).
func (h *Hash) RandomDistinct(count int, fn func(field, value []byte)) {
	if h.dict == nil {
		offs := h.pack.offsets(nil)
		hsPickDistinct(len(offs), count, func(i int) { fn(h.pack.pairAt(offs[i])) })
		return
	}
	if count*3 > h.dict.Len() {
		// Many of the fields: choose among them all rather than sample
		// and retry (Redis's threshold for the same switch).
		keys := make([]string, 0, h.dict.Len())
		h.dict.ForEach(func(k string, _ *hashValue) bool {
			keys = append(keys, k)
			return true
		})
		hsPickDistinct(len(keys), count, func(i int) { fn(hsBytes(keys[i]), hsBytes(h.dict.Get(keys[i]).s)) })
		return
	}
	seen := make(map[string]struct{}, count)
	for len(seen) < count {
		k, v := h.dict.RandomEntry()
		if _, dup := seen[k]; dup {
			continue
		}
		seen[k] = struct{}{}
		fn(hsBytes(k), hsBytes(v.s))
	}
}

// hsPickDistinct calls fn with count distinct random indexes below n (a
// partial Fisher-Yates shuffle).
func hsPickDistinct(n, count int, fn func(i int)) {
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	for i := 0; i < count; i++ {
		j := i + rand.IntN(n-i)
		idx[i], idx[j] = idx[j], idx[i]
		fn(idx[i])
	}
}

// fitsPack reports whether a field and value may stay in the listpack
// form.
func (h *Hash) fitsPack(field, value []byte) bool {
	return int64(len(field)) <= h.lim.HashMaxListpackValue && int64(len(value)) <= h.lim.HashMaxListpackValue
}

// set stores value under field, converting to the hashtable form when the
// thresholds say so (as Redis's hashTypeSet does, updates included);
// created reports a new field.
func (h *Hash) set(field, value []byte) (created bool) {
	if h.dict == nil && !h.fitsPack(field, value) {
		h.convert()
	}
	if h.dict != nil {
		_, v, created := h.dict.Insert(str(field))
		v.set(value)
		return created
	}
	created = h.pack.set(field, value)
	if int64(h.pack.n) > h.lim.HashMaxListpackEntries {
		h.convert()
	}
	return created
}

func (h *Hash) del(field []byte) bool {
	if h.dict != nil {
		_, ok := h.dict.Delete(str(field))
		return ok
	}
	return h.pack.del(field)
}

// convert moves a listpack hash to the hashtable form.
func (h *Hash) convert() {
	d := NewDict[hashValue]()
	h.pack.each(func(f, v []byte) bool {
		_, hv, _ := d.Insert(str(f))
		hv.set(v)
		return true
	})
	h.dict = d
	h.pack = fieldPack{}
}

// Clone implements Object; the copy keeps the encoding, as Redis's COPY
// does.
func (h *Hash) Clone() Object {
	c := &Hash{lim: h.lim}
	if h.dict == nil {
		c.pack = fieldPack{b: append([]byte(nil), h.pack.b...), n: h.pack.n}
		return c
	}
	c.dict = NewDict[hashValue]()
	h.dict.ForEach(func(k string, v *hashValue) bool {
		_, cv, _ := c.dict.Insert(k)
		cv.set(hsBytes(v.s))
		return true
	})
	return c
}

// MemoryUsage implements Object. Large hashes are estimated from a sample
// of their fields, as Redis's MEMORY USAGE samples.
func (h *Hash) MemoryUsage() int {
	const header = 64
	if h.dict == nil {
		return header + roundAlloc(cap(h.pack.b))
	}
	b0, b1 := h.dict.Buckets()
	size := header + 8*(b0+b1)
	sampled, bytes := 0, 0
	h.dict.ForEach(func(k string, v *hashValue) bool {
		bytes += 64 // the node: links, key, inline key bytes and value
		if len(k) > dictShortKey {
			bytes += roundAlloc(len(k))
		}
		if !v.inline() {
			bytes += roundAlloc(len(v.s))
		}
		sampled++
		return sampled < 1024
	})
	if sampled > 0 {
		size += bytes / sampled * h.dict.Len()
	}
	return size
}

func (h *Hash) persist(sink ChangeSink, db int, key []byte) {
	sink.PutValue(db, key, TypeHash, []byte{hashFormat})
	h.Each(func(f, v []byte) { sink.PutItem(db, key, f, v) })
}

func (h *Hash) hasItems() bool { return true }

func (h *Hash) loadLimits(l *Limits) { h.lim = l }

// loadItem adds one persisted field. Fields arrive once each, so the
// listpack form appends without searching; the thresholds then decide the
// encoding as they do for writes.
func (h *Hash) loadItem(field, value []byte) error {
	if h.lim == nil {
		return errors.New("hash loaded without encoding thresholds")
	}
	if h.dict == nil && h.fitsPack(field, value) && int64(h.pack.n) < h.lim.HashMaxListpackEntries {
		h.pack.appendNew(field, value)
		return nil
	}
	h.set(field, value)
	return nil
}

func init() {
	registerDecoder(TypeHash, func(payload []byte) (Object, error) {
		if len(payload) != 1 || payload[0] != hashFormat {
			return nil, fmt.Errorf("unknown hash record format %x", payload)
		}
		return &Hash{}, nil
	})
}

// hashAt looks key up as a hash (a read lookup when read is set, else a
// write lookup); nil when absent.
func (db *DB) hashAt(key []byte, read bool) (*Hash, error) {
	return lookupAs[*Hash](db, key, read)
}

// ReadHash looks key up for a read command (HGET, HGETALL, HSCAN, ...):
// nil when absent, ErrWrongType when it holds another type. The hash must
// not be kept past the engine lock.
func (db *DB) ReadHash(key []byte) (*Hash, error) { return db.hashAt(key, true) }

// newHashAt stores a new empty hash under key (absent, as a write lookup
// just found) and persists its value record.
func (db *DB) newHashAt(key []byte) *Hash {
	h := &Hash{lim: &db.e.limits}
	db.Set(key, h, false)
	return h
}

// HSet is HSET/HMSET: pairs holds field, value, field, value, ... It
// returns the number of new fields. Each pair writes one item record.
func (db *DB) HSet(key []byte, pairs [][]byte) (int, error) {
	h, err := db.hashAt(key, false)
	if err != nil {
		return 0, err
	}
	if h == nil {
		h = db.newHashAt(key)
	}
	if h.dict == nil && int64(h.pack.n+len(pairs)/2) <= h.lim.HashMaxListpackEntries {
		h.pack.reserve(pairs)
	}
	added := 0
	for i := 0; i+1 < len(pairs); i += 2 {
		if h.set(pairs[i], pairs[i+1]) {
			added++
		}
		db.e.sink.PutItem(db.id, key, pairs[i], pairs[i+1])
	}
	db.modified(key)
	return added, nil
}

// HSetNX is HSETNX: it sets field only when absent and reports whether it
// did.
func (db *DB) HSetNX(key, field, value []byte) (bool, error) {
	h, err := db.hashAt(key, false)
	if err != nil {
		return false, err
	}
	if h == nil {
		h = db.newHashAt(key)
	} else if h.Has(field) {
		return false, nil
	}
	h.set(field, value)
	db.e.sink.PutItem(db.id, key, field, value)
	db.modified(key)
	return true, nil
}

// HDel is HDEL: it returns the number of fields removed and whether the
// hash became empty and the key was deleted.
func (db *DB) HDel(key []byte, fields [][]byte) (n int, keyRemoved bool, err error) {
	h, err := db.hashAt(key, false)
	if h == nil {
		return 0, false, err
	}
	for _, f := range fields {
		if !h.del(f) {
			continue
		}
		n++
		if h.Len() == 0 {
			db.Delete(key)
			return n, true, nil
		}
		db.e.sink.DeleteItem(db.id, key, f)
	}
	if n > 0 {
		db.modified(key)
	}
	return n, false, nil
}

// HIncrBy is HINCRBY: it adds delta to the integer in field (0 when
// absent) and returns the result.
func (db *DB) HIncrBy(key, field []byte, delta int64) (int64, error) {
	h, err := db.hashAt(key, false)
	if err != nil {
		return 0, err
	}
	var cur int64
	if h != nil {
		if v, ok := h.Get(field); ok {
			if cur, ok = ParseInt(v); !ok {
				return 0, ErrHashNotInt
			}
		}
	}
	if (delta < 0 && cur < 0 && delta < minInt64-cur) || (delta > 0 && cur > 0 && delta > maxInt64-cur) {
		return 0, ErrOverflow
	}
	n := cur + delta
	var tmp [24]byte
	db.storeHashField(key, h, field, strconv.AppendInt(tmp[:0], n, 10))
	return n, nil
}

// HIncrByFloat is HINCRBYFLOAT, with Redis's long double arithmetic and
// formatting; it returns the stored text. A long result may move the hash
// to the hashtable form, as in Redis.
func (db *DB) HIncrByFloat(key, field, incr []byte) ([]byte, error) {
	in, ok := parseLongDouble(incr)
	if !ok {
		return nil, ErrNotFloat
	}
	if in.inf != 0 {
		return nil, ErrIncrNaNOrInf
	}
	h, err := db.hashAt(key, false)
	if err != nil {
		return nil, err
	}
	var cur []byte // nil: the field is absent and counts as 0
	if h != nil {
		if v, ok := h.Get(field); ok {
			cur = append(make([]byte, 0, len(v)), v...)
		}
	}
	out, err := AddLongDoubleStrings(cur, incr)
	if err == ErrNotFloat {
		return nil, ErrHashNotFloat
	}
	if err != nil {
		return nil, err
	}
	db.storeHashField(key, h, field, out)
	return out, nil
}

// storeHashField writes one field of h (creating the hash when nil) and
// persists it.
func (db *DB) storeHashField(key []byte, h *Hash, field, value []byte) {
	if h == nil {
		h = db.newHashAt(key)
	}
	h.set(field, value)
	db.e.sink.PutItem(db.id, key, field, value)
	db.modified(key)
}
