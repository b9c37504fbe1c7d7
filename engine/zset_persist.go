package engine

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// Sorted sets persist one item record per member, keyed by the member's
// place in the set: an 8-byte order-preserving score, then the member
// bytes. The store then keeps a set's records in the set's own order
// (zless), so members removed together from one end (ZPOPMIN, ZPOPMAX) or
// from one span (ZREMRANGEBYSCORE/RANK/LEX) are one range deletion, and
// consecutive pops extend the same range. Keyed by member, each pop was a
// point deletion somewhere in a million records, and compacting those
// tombstones cost more than the pops themselves.
//
// The record's value is empty, except for a score of -0 (kept exactly by
// the skiplist form): -0 and 0 compare equal in the set, so both are keyed
// as 0 and the value holds the exact 8 IEEE 754 bytes.

var errBadZSetItem = errors.New("sorted set item record is shorter than its 8-byte score")

// zsetItemKey appends the item key of (score, member) to dst.
func zsetItemKey(dst []byte, score float64, member string) []byte {
	u := math.Float64bits(score)
	if score == 0 {
		u = 0 // -0 sorts with 0, as zless compares them
	}
	if u>>63 != 0 {
		u = ^u // negative: larger magnitudes sort first
	} else {
		u |= 1 << 63
	}
	dst = binary.BigEndian.AppendUint64(dst, u)
	return append(dst, member...)
}

// zsetItemValue appends the record's value for score to dst: nothing, or
// the exact bytes of -0.
func zsetItemValue(dst []byte, score float64) []byte {
	if score == 0 && math.Signbit(score) {
		return binary.BigEndian.AppendUint64(dst, math.Float64bits(score))
	}
	return dst
}

// decodeZSetItem reverses zsetItemKey and zsetItemValue. member aliases
// item.
func decodeZSetItem(item, val []byte) (score float64, member []byte, err error) {
	if len(item) < 8 {
		return 0, nil, errBadZSetItem
	}
	u := binary.BigEndian.Uint64(item)
	if u>>63 != 0 {
		u &^= 1 << 63
	} else {
		u = ^u
	}
	score, member = math.Float64frombits(u), item[8:]
	switch {
	case math.IsNaN(score):
		return 0, nil, fmt.Errorf("sorted set member %q has a NaN score", member)
	case len(val) == 8:
		exact := math.Float64frombits(binary.BigEndian.Uint64(val))
		if exact != score {
			return 0, nil, fmt.Errorf("sorted set member %q: score %v keyed as %v", member, exact, score)
		}
		score = exact
	case len(val) != 0:
		return 0, nil, fmt.Errorf("sorted set member %q: bad score record %x", member, val)
	}
	return score, member, nil
}

func (z *ZSet) persist(sink ChangeSink, db int, key []byte) {
	sink.PutValue(db, key, TypeZSet, nil)
	var buf []byte
	z.walk(0, false, func(it zitem) bool {
		buf = zsetItemKey(buf[:0], it.score, it.member)
		n := len(buf)
		buf = zsetItemValue(buf, it.score)
		sink.PutItem(db, key, buf[:n], buf[n:])
		return true
	})
}

func (z *ZSet) hasItems() bool { return true }

// loadLimits receives the thresholds in force before the items load: as
// Redis does when it loads a dump, the encoding is derived from the
// contents (skiplist when they exceed a listpack's limits).
func (z *ZSet) loadLimits(l *Limits) { z.lim = l }

// loadItem adds one persisted member. Records arrive in the set's order,
// so the tree form appends.
func (z *ZSet) loadItem(item, val []byte) error {
	score, member, err := decodeZSetItem(item, val)
	if err != nil {
		return err
	}
	z.remove(str(member)) // a record replayed twice: the last one wins
	lim := z.lim
	if lim == nil {
		d := DefaultLimits()
		lim = &d
	}
	if z.packed() && exceedsListpack(lim, z.Len()+1, len(member)) {
		z.toSkiplist()
	}
	if last, ok := z.last(); !z.packed() && (!ok || zless(last, zitem{score, str(member)})) {
		z.appendSorted(str(member), score) // copies, as insertNew does
		return nil
	}
	z.insertNew(str(member), score) // both forms copy the member
	return nil
}

func init() {
	registerDecoder(TypeZSet, func(payload []byte) (Object, error) {
		if len(payload) != 0 {
			return nil, fmt.Errorf("bad sorted set value record %x", payload)
		}
		return NewZSet(), nil
	})
}

// putZItem records member at score.
func (db *DB) putZItem(key []byte, score float64, member string) {
	b := zsetItemKey(db.e.recordBuf[:0], score, member)
	n := len(b)
	b = zsetItemValue(b, score)
	db.e.recordBuf = b
	db.e.sink.PutItem(db.id, key, b[:n], b[n:])
}

// deleteZItem removes member's record at score.
func (db *DB) deleteZItem(key []byte, score float64, member string) {
	db.e.recordBuf = zsetItemKey(db.e.recordBuf[:0], score, member)
	db.e.sink.DeleteItem(db.id, key, db.e.recordBuf)
}

// deleteZRange removes the records from the one of from (inclusive, or
// exclusive with fromAfter) to the one of to (exclusive, or inclusive with
// toAfter): "after" is the key's byte-order successor, the key plus a zero
// byte. The caller guarantees the set holds no member in between.
func (db *DB) deleteZRange(key []byte, from zitem, fromAfter bool, to zitem, toAfter bool) {
	b := zsetItemKey(db.e.recordBuf[:0], from.score, from.member)
	if fromAfter {
		b = append(b, 0)
	}
	n := len(b)
	b = zsetItemKey(b, to.score, to.member)
	if toAfter {
		b = append(b, 0)
	}
	db.e.recordBuf = b
	db.e.sink.DeleteItemRange(db.id, key, b[:n], b[n:])
}
