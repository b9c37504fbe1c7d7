package engine

// A list in Pebble: one value record naming the format, one item record
// per element keyed by its position.

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// listFormat is the value record's payload: the layout of the item
// records, one per element, keyed by position.
const listFormat = 1

// listPosItem encodes a position as an item key whose byte order is the
// numeric order: big-endian with the sign bit flipped.
func listPosItem(pos int64) [8]byte {
	var k [8]byte
	binary.BigEndian.PutUint64(k[:], uint64(pos)^(1<<63))
	return k
}

func listItemPos(item []byte) (int64, bool) {
	if len(item) != 8 {
		return 0, false
	}
	return int64(binary.BigEndian.Uint64(item) ^ (1 << 63)), true
}

func (l *List) persist(sink ChangeSink, db int, key []byte) {
	sink.PutValue(db, key, TypeList, []byte{listFormat})
	l.persistRange(sink, db, key, 0, l.n)
}

// persistRange writes the item records of elements [from, from+count).
func (l *List) persistRange(sink ChangeSink, db int, key []byte, from, count int) {
	pos := l.head + int64(from)
	l.Each(from, count, false, func(v []byte) {
		k := listPosItem(pos)
		sink.PutItem(db, key, k[:], v)
		pos++
	})
}

// loadItem appends one element at start-up; items arrive in key order,
// which is position order, and must be contiguous.
func (l *List) loadItem(item, val []byte) error {
	pos, ok := listItemPos(item)
	if !ok {
		return fmt.Errorf("list item key of %d bytes, want 8", len(item))
	}
	if l.n == 0 {
		l.head = pos
	} else if want := l.head + int64(l.n); pos != want {
		return fmt.Errorf("list element at position %d where %d was expected", pos, want)
	}
	l.pushBack(val)
	return nil
}

var errListFormat = errors.New("list value record of an unknown format")

func init() {
	registerDecoder(TypeList, func(payload []byte) (Object, error) {
		if len(payload) != 1 || payload[0] != listFormat {
			return nil, errListFormat
		}
		return NewList(), nil
	})
}
