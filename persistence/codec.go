package persistence

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/revolver-db/revolver/engine"
)

// Pebble key layout (all integers big-endian):
//
//	"\x00format"                           format record, value "revolver-data N"
//	'k' db:1 len(key):4 key 0x00           value record: type byte, payload
//	'k' db:1 len(key):4 key 0x01           expire record: int64 unix ms
//	'k' db:1 len(key):4 key 0x02 item      item record: sub-record of a composite
//	's' name                               server record: state outside the databases
//	                                       (function libraries), which FLUSHALL keeps
//
// The fixed-width length keeps one key's records contiguous and makes no
// key's prefix a prefix of another's, so a key's records can be removed with
// one range delete. Within a key, value < expire < items, which is the order
// Load hands them to the engine.
const (
	keyspaceTag  = 'k'
	keyspaceEnd  = 'l' // keyspaceTag+1: upper bound of every record key
	serverTag    = 's'
	serverEnd    = 't'
	keyHeaderLen = 1 + 1 + 4
	maxDB        = math.MaxUint8
	formatKey    = "\x00format"
	formatPrefix = "revolver-data "
	// formatVersion 2 keys sorted-set items by score, then member
	// (engine/zset_persist.go); 1 keyed them by member.
	formatVersion = 2
)

// Record kinds: the byte after a key's prefix.
const (
	kindValue  byte = 0x00
	kindExpire byte = 0x01
	kindItem   byte = 0x02
	kindEnd    byte = 0x03 // exclusive end of a key's records
)

var errShortKey = errors.New("record key too short")

// prefixLen is the length of a key's record prefix.
func prefixLen(key []byte) int { return keyHeaderLen + len(key) }

// putPrefix writes 'k' | db | len(key) | key into dst, which must be at least
// prefixLen(key) long, and returns the bytes written.
func putPrefix(dst []byte, db int, key []byte) int {
	dst[0] = keyspaceTag
	dst[1] = byte(db)
	binary.BigEndian.PutUint32(dst[2:6], uint32(len(key)))
	return keyHeaderLen + copy(dst[keyHeaderLen:], key)
}

// putRecordKey writes a record key (prefix, kind, item) into dst, which must
// be exactly recordKeyLen(key, item) long.
func putRecordKey(dst []byte, db int, key []byte, kind byte, item []byte) {
	n := putPrefix(dst, db, key)
	dst[n] = kind
	copy(dst[n+1:], item)
}

func recordKeyLen(key, item []byte) int { return prefixLen(key) + 1 + len(item) }

// appendRecordKey is the allocating form of putRecordKey, for tests and
// iterator bounds.
func appendRecordKey(dst []byte, db int, key []byte, kind byte, item []byte) []byte {
	n := len(dst)
	dst = append(dst, make([]byte, recordKeyLen(key, item))...)
	putRecordKey(dst[n:], db, key, kind, item)
	return dst
}

// serverRecordKey is the Pebble key of the server record name.
func serverRecordKey(name []byte) []byte { return append([]byte{serverTag}, name...) }

// dbStartLen and dbEndLen size the range [start, end) holding every record
// of one database; putDBBounds writes it.
const dbStartLen = 2

func dbEndLen(db int) int {
	if db == maxDB {
		return 1
	}
	return 2
}

func putDBBounds(start, end []byte, db int) {
	start[0], start[1] = keyspaceTag, byte(db)
	if db == maxDB {
		end[0] = keyspaceEnd
		return
	}
	end[0], end[1] = keyspaceTag, byte(db+1)
}

// recordKey is a decoded record key. Key and Item alias the input.
type recordKey struct {
	DB   int
	Key  []byte
	Kind byte
	Item []byte
}

// decodeRecordKey parses a record key; malformed keys are errors, never
// panics, since they come from disk.
func decodeRecordKey(k []byte) (recordKey, error) {
	var r recordKey
	if len(k) < keyHeaderLen+1 {
		return r, errShortKey
	}
	if k[0] != keyspaceTag {
		return r, fmt.Errorf("record key starts with %#x, not %q", k[0], keyspaceTag)
	}
	r.DB = int(k[1])
	n := binary.BigEndian.Uint32(k[2:6])
	if uint64(n) > uint64(len(k)-keyHeaderLen-1) {
		return r, fmt.Errorf("record key declares a %d-byte key but holds %d bytes", n, len(k)-keyHeaderLen-1)
	}
	end := keyHeaderLen + int(n)
	r.Key = k[keyHeaderLen:end]
	r.Kind = k[end]
	r.Item = k[end+1:]
	switch r.Kind {
	case kindValue, kindExpire:
		if len(r.Item) != 0 {
			return r, fmt.Errorf("record kind %#x has %d trailing bytes", r.Kind, len(r.Item))
		}
	case kindItem:
	default:
		return r, fmt.Errorf("unknown record kind %#x", r.Kind)
	}
	return r, nil
}

// decodeValue splits a value record into its type and payload.
func decodeValue(v []byte) (engine.Type, []byte, error) {
	if len(v) == 0 {
		return 0, nil, errors.New("empty value record")
	}
	return engine.Type(v[0]), v[1:], nil
}

func putExpire(dst []byte, at int64) { binary.BigEndian.PutUint64(dst, uint64(at)) }

func decodeExpire(v []byte) (int64, error) {
	if len(v) != 8 {
		return 0, fmt.Errorf("expire record is %d bytes, want 8", len(v))
	}
	return int64(binary.BigEndian.Uint64(v)), nil
}

func formatValue(version int) []byte { return fmt.Appendf(nil, "%s%d", formatPrefix, version) }

// parseFormat returns the format version of a format record value.
func parseFormat(v []byte) (int, bool) {
	var n int
	s := string(v)
	if len(s) <= len(formatPrefix) || s[:len(formatPrefix)] != formatPrefix {
		return 0, false
	}
	for _, c := range s[len(formatPrefix):] {
		if c < '0' || c > '9' || n > math.MaxInt32/10 {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}
