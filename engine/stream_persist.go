package engine

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// A stream persists as a value record and item records:
//
//	value:  format, last id, max deleted id, entries added, and the tail
//	        node (master id, last id, deleted, body bytes, master fields),
//	        which the next XADD appends to
//	'e' id: an entry: its node's master id, then its fields and values
//	'g' name: a consumer group: last delivered id, entries read
//	'c' len(group) group consumer: a consumer: its seen time
//	'p' len(group) group id: a pending entry: delivery time and count,
//	        and the consumer
//
// Every write to the stream rewrites the value record (XADD moves the last
// id, XDEL the max deleted id), so it always holds the tail node as it is.
const streamFormat = 1

var errBadStreamRecord = errors.New("malformed stream record")

const (
	streamItemEntry    = 'e'
	streamItemGroup    = 'g'
	streamItemConsumer = 'c'
	streamItemPending  = 'p'
)

func (s *Stream) valueRecord() []byte {
	b := []byte{streamFormat}
	b = s.lastID.encode(b)
	b = s.maxDeleted.encode(b)
	b = binary.AppendUvarint(b, s.entriesAdded)
	tail, ok := s.nodes.Max()
	if !ok {
		return append(b, 0)
	}
	b = append(b, 1)
	b = tail.master.encode(b)
	b = tail.last.encode(b)
	b = binary.AppendUvarint(b, uint64(tail.deleted))
	b = binary.AppendUvarint(b, uint64(tail.body))
	b = binary.AppendUvarint(b, uint64(len(tail.masterFields)))
	for _, f := range tail.masterFields {
		b = binary.AppendUvarint(b, uint64(len(f)))
		b = append(b, f...)
	}
	return b
}

type byteReader struct {
	b   []byte
	err bool
}

func (r *byteReader) uvarint() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err = true
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *byteReader) take(n uint64) []byte {
	if uint64(len(r.b)) < n {
		r.err = true
		return nil
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}

func (r *byteReader) id() StreamID {
	b := r.take(16)
	if b == nil {
		return StreamID{}
	}
	return decodeStreamID(b)
}

func decodeStream(payload []byte) (Object, error) {
	if len(payload) < 1 || payload[0] != streamFormat {
		return nil, fmt.Errorf("unknown stream record format")
	}
	r := &byteReader{b: payload[1:]}
	s := NewStream()
	s.lastID = r.id()
	s.maxDeleted = r.id()
	s.entriesAdded = r.uvarint()
	hasTail := r.take(1)
	if len(hasTail) == 1 && hasTail[0] == 1 {
		n := &streamNode{master: r.id(), last: r.id()}
		n.deleted = int(r.uvarint())
		n.body = int(r.uvarint())
		nf := r.uvarint()
		if nf > uint64(len(r.b)) {
			return nil, errBadStreamRecord
		}
		for i := uint64(0); i < nf && !r.err; i++ {
			n.masterFields = append(n.masterFields, append([]byte(nil), r.take(r.uvarint())...))
		}
		s.nodes.Set(n) // entries attach to it as they load
	}
	if r.err {
		return nil, errBadStreamRecord
	}
	return s, nil
}

func streamEntryItem(id StreamID) []byte {
	return id.encode([]byte{streamItemEntry})
}

func streamEntryValue(e *streamEntry) []byte {
	return append(e.node.master.encode(make([]byte, 0, 16+len(e.data))), e.data...)
}

func (s *Stream) persist(sink ChangeSink, db int, key []byte) {
	sink.PutValue(db, key, TypeStream, s.valueRecord())
	s.entries.Scan(func(e *streamEntry) bool {
		sink.PutItem(db, key, streamEntryItem(e.id), streamEntryValue(e))
		return true
	})
	s.groups.Scan(func(g *StreamGroup) bool {
		g.persist(sink, db, key)
		return true
	})
}

func (s *Stream) hasItems() bool { return true }

// loadItem adds one persisted sub-record. Entries arrive in id order, so
// each goes into the last node or opens the next; the tail node's
// counters come from the value record.
func (s *Stream) loadItem(item, val []byte) error {
	if len(item) == 0 {
		return errBadStreamRecord
	}
	switch item[0] {
	case streamItemEntry:
		if len(item) != 17 || len(val) < 16 {
			return errBadStreamRecord
		}
		id := decodeStreamID(item[1:])
		master := decodeStreamID(val)
		r := &byteReader{b: val[16:]}
		var fields [][]byte
		for len(r.b) > 0 && !r.err {
			fields = append(fields, r.take(r.uvarint()))
		}
		if r.err || len(fields)%2 != 0 || len(fields) == 0 {
			return errBadStreamRecord
		}
		n, _ := s.nodes.Get(&streamNode{master: master})
		if n == nil {
			n = newStreamNode(master, fields)
			s.nodes.Set(n)
		}
		if n.master == id && len(n.masterFields) == 0 {
			n.masterFields = newStreamNode(id, fields).masterFields
		}
		if tail, _ := s.nodes.Max(); tail != n {
			// Not the tail: only membership and the last id matter.
			n.body += n.entryBytes(id, fields)
		}
		if n.last.Less(id) {
			n.last = id
		}
		n.live++
		s.entries.Set(&streamEntry{id: id, node: n, data: packFields(fields)})
		return nil
	case streamItemGroup, streamItemConsumer, streamItemPending:
		return s.loadGroupItem(item, val)
	}
	return errBadStreamRecord
}

func init() {
	registerType(TypeStream, "stream", decodeStream)
}

// putStreamValue rewrites the stream's value record.
func (db *DB) putStreamValue(key []byte, s *Stream) {
	db.e.sink.PutValue(db.id, key, TypeStream, s.valueRecord())
}
