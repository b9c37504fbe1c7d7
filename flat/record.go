package flat

import (
	"encoding/binary"
	"math/bits"
)

// Record is the encoding of one key, a view into an arena slot (or any
// buffer). Layout:
//
//	[0]     type      the engine's type/encoding byte, opaque here
//	[1:4]   clock     24-bit LRU/LFU clock, little endian
//	        head      uvarint: key length << 2 | flags
//	        expire    8 bytes, little endian, if flagExpire
//	        value     uvarint value length, or an 8-byte reference if flagRef
//	        key bytes
//	        value bytes (none if flagRef)
//
// The flags ride in the key length so a 10-byte key with a 32-byte value
// takes 48 bytes (4 + 1 + 1 + 10 + 32), a slot of the 48-byte class. The
// fixed fields (type, clock, expire when present, reference) can be changed
// in place; anything that changes the length needs a new record.
type Record []byte

const (
	flagExpire = 1 << 0
	flagRef    = 1 << 1
	flagBits   = 2

	recFixed = 4 // type byte + clock
	// MaxClock is the largest clock value a record holds.
	MaxClock = 1<<24 - 1
)

func uvarintLen(x uint64) int { return (bits.Len64(x|1) + 6) / 7 }

// RecordSize is the length of a record holding a value of valLen bytes.
func RecordSize(keyLen, valLen int, hasExpire bool) int {
	n := recFixed + uvarintLen(uint64(keyLen)<<flagBits) + uvarintLen(uint64(valLen)) + keyLen + valLen
	if hasExpire {
		n += 8
	}
	return n
}

// RefRecordSize is the length of a record holding a reference.
func RefRecordSize(keyLen int, hasExpire bool) int {
	n := recFixed + uvarintLen(uint64(keyLen)<<flagBits) + 8 + keyLen
	if hasExpire {
		n += 8
	}
	return n
}

// putHead writes the fields up to the value length or reference and
// returns where they end.
func putHead(dst []byte, typ uint8, clock uint32, expire int64, keyLen int, flags uint64) int {
	dst[0] = typ
	putClock(dst, clock)
	if expire != 0 {
		flags |= flagExpire
	}
	off := recFixed + binary.PutUvarint(dst[recFixed:], uint64(keyLen)<<flagBits|flags)
	if expire != 0 {
		binary.LittleEndian.PutUint64(dst[off:], uint64(expire))
		off += 8
	}
	return off
}

// InitRecord writes a record for key with room for a valLen-byte value into
// dst (at least RecordSize long) and returns it; the caller fills Value().
// expire is a deadline in unix milliseconds, 0 for none.
func InitRecord(dst []byte, typ uint8, clock uint32, expire int64, key []byte, valLen int) Record {
	off := putHead(dst, typ, clock, expire, len(key), 0)
	off += binary.PutUvarint(dst[off:], uint64(valLen))
	off += copy(dst[off:], key)
	return Record(dst[: off+valLen : off+valLen])
}

// PutRecord writes a record for key holding val into dst (at least
// RecordSize long) and returns it.
func PutRecord(dst []byte, typ uint8, clock uint32, expire int64, key, val []byte) Record {
	r := InitRecord(dst, typ, clock, expire, key, len(val))
	copy(r[len(r)-len(val):], val)
	return r
}

// PutRefRecord writes a record for key holding the reference ref (a number
// the caller maps to an object of its own) into dst (at least
// RefRecordSize long) and returns it.
func PutRefRecord(dst []byte, typ uint8, clock uint32, expire int64, key []byte, ref uint64) Record {
	off := putHead(dst, typ, clock, expire, len(key), flagRef)
	binary.LittleEndian.PutUint64(dst[off:], ref)
	off += 8
	off += copy(dst[off:], key)
	return Record(dst[:off:off])
}

func putClock(b []byte, c uint32) {
	b[1], b[2], b[3] = byte(c), byte(c>>8), byte(c>>16)
}

// layout is where a record's variable fields are.
type layout struct {
	flags  uint64
	expOff int // 0 when there is no expire field
	refOff int // 0 for a value record
	keyOff int
	keyLen int
	valOff int
	valLen int
}

func (r Record) layout() layout {
	var l layout
	head, n := uvarint(r[recFixed:])
	l.flags = head & (1<<flagBits - 1)
	l.keyLen = int(head >> flagBits)
	off := recFixed + n
	if l.flags&flagExpire != 0 {
		l.expOff = off
		off += 8
	}
	if l.flags&flagRef != 0 {
		l.refOff = off
		off += 8
	} else {
		v, n := uvarint(r[off:])
		l.valLen = int(v)
		off += n
	}
	l.keyOff = off
	l.valOff = off + l.keyLen
	return l
}

// uvarint is binary.Uvarint with the one-byte case first (keys shorter
// than 32 bytes, values shorter than 128).
func uvarint(b []byte) (uint64, int) {
	if b[0] < 0x80 {
		return uint64(b[0]), 1
	}
	return binary.Uvarint(b)
}

// Type is the type/encoding byte.
func (r Record) Type() uint8 { return r[0] }

// SetType changes the type/encoding byte in place.
func (r Record) SetType(t uint8) { r[0] = t }

// Clock is the 24-bit LRU/LFU clock.
func (r Record) Clock() uint32 { return uint32(r[1]) | uint32(r[2])<<8 | uint32(r[3])<<16 }

// SetClock changes the clock in place (its low 24 bits).
func (r Record) SetClock(c uint32) { putClock(r, c) }

// HasExpire reports whether the record has a deadline.
func (r Record) HasExpire() bool {
	head, _ := uvarint(r[recFixed:])
	return head&flagExpire != 0
}

// Expire is the deadline in unix milliseconds, 0 when none.
func (r Record) Expire() int64 {
	l := r.layout()
	if l.expOff == 0 {
		return 0
	}
	return int64(binary.LittleEndian.Uint64(r[l.expOff:]))
}

// SetExpire changes the deadline in place. It reports false, changing
// nothing, when the record has no expire field or at is 0 (adding or
// removing the field changes the record's length).
func (r Record) SetExpire(at int64) bool {
	l := r.layout()
	if l.expOff == 0 || at == 0 {
		return false
	}
	binary.LittleEndian.PutUint64(r[l.expOff:], uint64(at))
	return true
}

// IsRef reports whether the record holds a reference instead of a value.
func (r Record) IsRef() bool {
	head, _ := uvarint(r[recFixed:])
	return head&flagRef != 0
}

// Ref is the reference of a reference record (0 for a value record).
func (r Record) Ref() uint64 {
	l := r.layout()
	if l.refOff == 0 {
		return 0
	}
	return binary.LittleEndian.Uint64(r[l.refOff:])
}

// SetRef changes the reference in place; false for a value record.
func (r Record) SetRef(ref uint64) bool {
	l := r.layout()
	if l.refOff == 0 {
		return false
	}
	binary.LittleEndian.PutUint64(r[l.refOff:], ref)
	return true
}

// Key is the record's key (a view: copy it to keep it).
func (r Record) Key() []byte {
	// Every lookup reads a key, so the common shape (key shorter than 32
	// bytes, a value shorter than 128 or a reference) is decoded inline.
	if head := r[recFixed]; head < 0x80 {
		off := recFixed + 1 + 8*int(head&flagExpire)
		if head&flagRef != 0 {
			off += 8
		} else if r[off] < 0x80 {
			off++
		} else {
			return r.keySlow()
		}
		n := int(head >> flagBits)
		return r[off : off+n : off+n]
	}
	return r.keySlow()
}

func (r Record) keySlow() []byte {
	l := r.layout()
	return r[l.keyOff : l.keyOff+l.keyLen : l.keyOff+l.keyLen]
}

// Value is the record's value bytes (a view, writable in place; nil for a
// reference record).
func (r Record) Value() []byte {
	l := r.layout()
	if l.refOff != 0 {
		return nil
	}
	return r[l.valOff : l.valOff+l.valLen : l.valOff+l.valLen]
}

// Len is the record's encoded length (a slot may be longer).
func (r Record) Len() int {
	l := r.layout()
	return l.valOff + l.valLen
}

// KeyValue returns the key and value in one parse.
func (r Record) KeyValue() (key, val []byte) {
	l := r.layout()
	key = r[l.keyOff : l.keyOff+l.keyLen : l.keyOff+l.keyLen]
	if l.refOff == 0 {
		val = r[l.valOff : l.valOff+l.valLen : l.valOff+l.valLen]
	}
	return key, val
}
