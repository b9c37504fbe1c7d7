package engine

import (
	"errors"
	"strconv"

	"github.com/revolver-db/revolver/flat"
)

// String is a string value: bytes plus how Redis would encode them, so
// OBJECT ENCODING answers int, embstr or raw exactly as Redis 7.0 does.
type String struct {
	objHeader
	enc strEnc
	// private marks a copy made by COPY: Redis duplicates even its shared
	// small integers there, so OBJECT REFCOUNT of the copy is 1.
	private bool
	b       []byte
	// small holds values of up to smallString bytes inside the object (b
	// then points here): one allocation and one memory access fewer for
	// the short values most keys hold, at no cost in size (the object
	// stays in the 48-byte size class).
	small [smallString]byte
}

const smallString = 16

type strEnc uint8

const (
	// encAuto: int when the bytes are a canonical int64, else embstr up to
	// 44 bytes, else raw (SET, MSET, APPEND creating a key, INCR).
	encAuto strEnc = iota
	// encNoInt: embstr or raw by length (INCRBYFLOAT results).
	encNoInt
	// encRaw: raw whatever the contents (after APPEND, SETRANGE, SETBIT).
	encRaw
)

// embstrMax is the longest string Redis stores as embstr.
const embstrMax = 44

// ErrStringTooLong is Redis's reply when a string would exceed
// proto-max-bulk-len.
var ErrStringTooLong = errors.New("ERR string exceeds maximum allowed size (proto-max-bulk-len)")

// NewString returns a string value holding a copy of b.
func NewString(b []byte) *String {
	s := &String{}
	s.store(b)
	return s
}

// newZeroString returns a raw-encoded string of n zero bytes.
func newZeroString(n int) *String {
	s := &String{enc: encRaw}
	if n <= smallString {
		s.b = s.small[:n]
	} else {
		s.b = make([]byte, n)
	}
	return s
}

// store copies v into s, inside the object when it fits.
func (s *String) store(v []byte) {
	if len(v) <= smallString {
		s.b = append(s.small[:0], v...)
		return
	}
	s.b = append(make([]byte, 0, len(v)), v...)
}

// inline reports whether the bytes live in s.small.
func (s *String) inline() bool {
	return cap(s.b) == smallString && len(s.b) > 0 && &s.b[0] == &s.small[0]
}

// Type implements Object.
func (s *String) Type() Type { return TypeString }

// Bytes returns the value. The slice aliases the stored value: copy it
// before the engine lock is released.
func (s *String) Bytes() []byte { return s.b }

// Encoding implements Object.
func (s *String) Encoding() string {
	if s.enc != encRaw {
		if s.enc == encAuto && len(s.b) <= 20 {
			if _, ok := ParseInt(s.b); ok {
				return "int"
			}
		}
		if len(s.b) <= embstrMax {
			return "embstr"
		}
	}
	return "raw"
}

// Clone implements Object.
func (s *String) Clone() Object {
	c := &String{enc: s.enc, private: true}
	c.store(s.b)
	return c
}

// sharedRefCount is the reference count Redis reports for its shared
// objects, among them the integers 0..9999 that SET and INCR store.
const sharedRefCount = 1<<31 - 1

// refCount is OBJECT REFCOUNT: Redis stores a value that is a small
// non-negative integer as a pointer to one shared object.
func (s *String) refCount() int64 {
	if s.enc == encAuto && !s.private && len(s.b) <= 4 {
		if v, ok := ParseInt(s.b); ok && v >= 0 && v < 10000 {
			return sharedRefCount
		}
	}
	return 1
}

// MemoryUsage implements Object.
func (s *String) MemoryUsage() int {
	if s.inline() || cap(s.b) == 0 {
		return 48
	}
	return 48 + roundAlloc(cap(s.b))
}

func (s *String) persist(sink ChangeSink, db int, key []byte) {
	sink.PutValue(db, key, TypeString, s.b)
}

func (s *String) hasItems() bool { return false }

// setBytes replaces the contents, reusing the buffer when it fits without
// wasting much: a SET over a same-sized value then allocates nothing.
func (s *String) setBytes(v []byte) {
	if c := cap(s.b); len(v) > smallString && c >= len(v) && c <= 2*len(v)+16 {
		s.b = append(s.b[:0], v...)
	} else {
		s.store(v)
	}
	s.enc = encAuto
	s.private = false
}

func init() {
	registerDecoder(TypeString, func(payload []byte) (Object, error) {
		return NewString(payload), nil
	})
}

// roundAlloc approximates the size class Go's allocator uses for n bytes.
func roundAlloc(n int) int {
	switch {
	case n == 0:
		return 0
	case n <= 8:
		return 8
	case n <= 16:
		return 16
	case n <= 32:
		return (n + 7) &^ 7
	case n <= 256:
		return (n + 15) &^ 15
	default:
		return (n + 127) &^ 127
	}
}

// stringAt returns key's string value for reading, nil when absent.
func (db *DB) stringAt(key []byte, read bool) (*String, error) {
	return lookupAs[*String](db, key, read)
}

// Get returns key's string value, a view of the store valid until the key
// is next written: write it out or copy it first. ok is false when the
// key is absent.
func (db *DB) Get(key []byte) (val []byte, ok bool, err error) {
	r := db.lookupRec(key, 0)
	if r == nil {
		return nil, false, nil
	}
	if recType(r) != TypeString {
		return nil, false, ErrWrongType
	}
	if obj := db.keys.ref(r); obj != nil {
		return obj.(*String).b, true, nil
	}
	return r.Value(), true, nil
}

// SetOptions are SET's flags.
type SetOptions struct {
	NX, XX   bool
	Get      bool  // return the old value
	ExpireAt int64 // unix ms deadline; 0 for none
	KeepTTL  bool
}

// SetResult tells what SET did.
type SetResult struct {
	Old    []byte // old value when SetOptions.Get and HadOld (possibly empty)
	HadOld bool   // the key existed
	Done   bool   // false when NX/XX prevented the write
}

// SetString is SET: it stores val under key with the options' conditions
// and deadline.
func (db *DB) SetString(key, val []byte, o SetOptions) (SetResult, error) {
	var r SetResult
	if o.Get {
		// The GET part is a read, with GET's statistics and keymiss event.
		s, err := db.stringAt(key, true)
		if err != nil {
			return r, err
		}
		if s != nil {
			r.Old = s.b // a copy of the old value: the write below does not touch it
		}
	}
	var old flat.Record
	if o.NX || o.XX {
		old = db.findRec(key)
		r.HadOld = old != nil
		if (o.NX && r.HadOld) || (o.XX && !r.HadOld) {
			return r, nil
		}
		if old == nil {
			old, _ = db.slot(key)
		}
	} else {
		// A plain SET finds or creates the entry in one probe.
		var created bool
		old, created = db.slot(key)
		r.HadOld = !created
	}
	r.Done = true
	expire := o.ExpireAt
	if expire == 0 && o.KeepTTL && old != nil {
		expire = old.Expire()
	}
	db.storeBytes(key, old, val, encAuto, expire)
	return r, nil
}

// GetDel returns key's string value and deletes the key.
func (db *DB) GetDel(key []byte) ([]byte, bool, error) {
	s, err := db.stringAt(key, true)
	if s == nil || err != nil {
		return nil, false, err
	}
	db.remove(key, db.findRec(key))
	return s.b, true, nil
}

// GetExOptions say how GETEX changes the deadline.
type GetExOptions struct {
	ExpireAt int64 // new deadline, 0 to leave as is
	Persist  bool
}

// GetExAction says what GETEX did to the key, so the caller announces
// the matching event.
type GetExAction uint8

// GETEX outcomes.
const (
	GetExNothing   GetExAction = iota
	GetExDeleted               // the new deadline had already passed
	GetExExpireSet             // a deadline was set
	GetExPersisted             // a deadline was removed
)

// GetExExpire is GETEX's second half: the caller has read key with Get
// (GETEX validates its expiry argument only after that read) and this
// changes the deadline. A deadline already passed deletes the key.
func (db *DB) GetExExpire(key []byte, o GetExOptions) GetExAction {
	r := db.findRec(key)
	switch {
	case r == nil:
		return GetExNothing
	case o.ExpireAt != 0 && o.ExpireAt <= db.e.now:
		db.remove(key, r)
		return GetExDeleted
	case o.ExpireAt != 0:
		db.setExpire(key, r, o.ExpireAt)
		return GetExExpireSet
	case o.Persist && r.Expire() != 0:
		db.setExpire(key, r, 0)
		db.modified(key)
		return GetExPersisted
	}
	return GetExNothing
}

// StrLen is STRLEN.
func (db *DB) StrLen(key []byte) (int, error) {
	v, _, err := db.Get(key)
	return len(v), err
}

// IncrBy adds delta to the integer stored at key (0 when absent).
func (db *DB) IncrBy(key []byte, delta int64) (int64, error) {
	r := db.writeRec(key)
	var cur int64
	if r != nil {
		if recType(r) != TypeString {
			return 0, ErrWrongType
		}
		b := r.Value()
		if obj := db.keys.ref(r); obj != nil {
			b = obj.(*String).b
		}
		v, ok := ParseInt(b)
		if !ok {
			return 0, ErrNotInt
		}
		cur = v
	}
	if (delta < 0 && cur < 0 && delta < minInt64-cur) || (delta > 0 && cur > 0 && delta > maxInt64-cur) {
		return 0, ErrOverflow
	}
	n := cur + delta
	var tmp [24]byte
	v := strconv.AppendInt(tmp[:0], n, 10)
	if r == nil || r.IsRef() {
		var s *String
		if r != nil {
			s = db.keys.ref(r).(*String)
		}
		db.storeString(key, s, v, encAuto)
		return n, nil
	}
	// In its record: rewritten there, keeping the deadline and clock.
	db.keys.putString(key, r, v, uint8(TypeString)|uint8(encAuto)<<recEncShift, r.Clock(), r.Expire())
	db.e.sink.deferString(db.id, key, v)
	db.modified(key)
	return n, nil
}

const (
	maxInt64 = int64(^uint64(0) >> 1)
	minInt64 = -maxInt64 - 1
)

// IncrByFloat adds incr to the number stored at key with Redis's long
// double arithmetic and returns the stored text.
func (db *DB) IncrByFloat(key []byte, incr []byte) ([]byte, error) {
	s, err := db.stringAt(key, false)
	if err != nil {
		return nil, err
	}
	var cur []byte
	if s != nil {
		cur = s.b
	}
	out, err := AddLongDoubleStrings(cur, incr)
	if err != nil {
		return nil, err
	}
	s = db.storeString(key, s, out, encNoInt)
	return s.b, nil
}

// storeString writes v as key's value, in place when s (the current value)
// exists, and persists it.
func (db *DB) storeString(key []byte, s *String, v []byte, enc strEnc) *String {
	if s != nil {
		s.setBytes(v)
		s.enc = enc
		db.Changed(key, s)
		return s
	}
	s = NewString(v)
	s.enc = enc
	old, _ := db.slot(key)
	db.store(key, old, s, 0)
	return s
}

// Append is APPEND; it returns the new length.
func (db *DB) Append(key, val []byte) (int, error) {
	s, err := db.stringAt(key, false)
	if err != nil {
		return 0, err
	}
	if s == nil {
		s = NewString(val)
		db.Set(key, s, false)
		return len(s.b), nil
	}
	if int64(len(s.b))+int64(len(val)) > db.e.maxStringLen {
		return 0, ErrStringTooLong
	}
	old := len(s.b)
	s.b = append(s.b, val...)
	s.enc = encRaw
	db.ChangedBytes(key, s, old, len(s.b))
	return len(s.b), nil
}

// GetRange is GETRANGE with Redis's index clamping.
func (db *DB) GetRange(key []byte, start, end int64) ([]byte, error) {
	s, err := db.stringAt(key, true)
	if s == nil {
		return nil, err
	}
	n := int64(len(s.b))
	if start < 0 && end < 0 && start > end {
		return nil, nil
	}
	start, end = clampByteRange(start, end, n)
	if start > end || n == 0 {
		return nil, nil
	}
	return s.b[start : end+1], nil
}

// ErrOffsetRange is SETRANGE's reply for a negative offset.
var ErrOffsetRange = errors.New("ERR offset is out of range")

// SetRange is SETRANGE; it returns the new length. changed reports whether
// anything was written (an empty value writes nothing).
func (db *DB) SetRange(key []byte, offset int64, val []byte) (n int, changed bool, err error) {
	if offset < 0 {
		return 0, false, ErrOffsetRange
	}
	s, err := db.stringAt(key, false)
	if err != nil {
		return 0, false, err
	}
	if len(val) == 0 {
		if s == nil {
			return 0, false, nil
		}
		return len(s.b), false, nil
	}
	if offset > db.e.maxStringLen-int64(len(val)) {
		return 0, false, ErrStringTooLong
	}
	end := int(offset) + len(val)
	if s == nil {
		s = newZeroString(end)
		copy(s.b[offset:], val)
		db.Set(key, s, false)
		return end, true, nil
	}
	s.b = growZero(s.b, end)
	copy(s.b[offset:], val)
	s.enc = encRaw
	db.ChangedBytes(key, s, int(offset), end)
	return len(s.b), true, nil
}

// growZero extends b with zero bytes to at least n bytes.
func growZero(b []byte, n int) []byte {
	if n <= len(b) {
		return b
	}
	if n <= cap(b) {
		old := len(b)
		b = b[:n]
		clear(b[old:])
		return b
	}
	nb := make([]byte, n, n+n/4)
	copy(nb, b)
	return nb
}

// ParseInt parses a canonical decimal int64 the way Redis's string2ll does:
// an optional '-', no '+', no spaces, no leading zeros ("0" alone, and not
// "-0"), at most 20 characters, no overflow. It does not allocate. Command
// arguments and the request reader's "*<n>" and "$<n>" headers use it.
func ParseInt(b []byte) (int64, bool) {
	n := len(b)
	if n > 0 && n <= 18 && b[0] >= '1' && b[0] <= '9' {
		// Positive and too short to overflow: most numbers.
		v := int64(b[0] - '0')
		for _, c := range b[1:] {
			if c < '0' || c > '9' {
				return 0, false
			}
			v = v*10 + int64(c-'0')
		}
		return v, true
	}
	if n == 0 || n > 20 {
		return 0, false
	}
	if n == 1 && b[0] == '0' {
		return 0, true
	}
	i, neg := 0, false
	if b[0] == '-' {
		neg = true
		i++
		if i == n {
			return 0, false
		}
	}
	if b[i] < '1' || b[i] > '9' {
		return 0, false
	}
	var v uint64
	for ; i < n; i++ {
		c := b[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if v > (^uint64(0)-d)/10 {
			return 0, false
		}
		v = v*10 + d
	}
	if neg {
		if v > 1<<63 {
			return 0, false
		}
		return -int64(v), true
	}
	if v > 1<<63-1 {
		return 0, false
	}
	return int64(v), true
}

// clampByteRange turns start and end (negative ones counting from the end)
// into indexes within n bytes the way GETRANGE, BITCOUNT and BITPOS do:
// both are clamped into [0, n-1], so an end before the start means empty.
func clampByteRange(start, end, n int64) (int64, int64) {
	if start < 0 {
		start += n
	}
	if end < 0 {
		end += n
	}
	if start < 0 {
		start = 0
	}
	if end < 0 {
		end = 0
	}
	if end >= n {
		end = n - 1
	}
	return start, end
}
