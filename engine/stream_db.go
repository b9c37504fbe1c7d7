package engine

import "errors"

// Stream errors, with Redis's texts.
var (
	ErrStreamIDTooSmall = errors.New("ERR The ID specified in XADD is equal or smaller than the target stream top item")
	ErrStreamExhausted  = errors.New("ERR The stream has exhausted the last possible ID, unable to add more items")
	ErrXSetIDTooSmall   = errors.New("ERR The ID specified in XSETID is smaller than the target stream top item")
	ErrXSetIDAdded      = errors.New("ERR The entries_added specified in XSETID is smaller than the target stream length")
)

// Trim strategies of XADD and XTRIM.
const (
	TrimNone = iota
	TrimMaxLen
	TrimMinID
)

// StreamTrim is a parsed MAXLEN/MINID option.
type StreamTrim struct {
	Strategy int
	MaxLen   int64
	MinID    StreamID
	Approx   bool
	Limit    int64 // 0: none; -1: the default of an approximate trim
}

// XAddArgs is a parsed XADD.
type XAddArgs struct {
	ID         StreamID
	IDGiven    bool
	SeqGiven   bool
	NoMkStream bool
	Trim       StreamTrim
	Fields     [][]byte
}

// ReadStream looks key up for a read command: nil when absent.
func (db *DB) ReadStream(key []byte) (*Stream, error) { return lookupAs[*Stream](db, key, true) }

// WriteStream looks key up for a write command: nil when absent.
func (db *DB) WriteStream(key []byte) (*Stream, error) { return lookupAs[*Stream](db, key, false) }

// newStreamAt stores a new empty stream under key (absent).
func (db *DB) newStreamAt(key []byte) *Stream {
	s := NewStream()
	s.lim = &db.e.limits
	db.Set(key, s, false)
	return s
}

// CreateStream stores an empty stream under key (XGROUP CREATE MKSTREAM).
func (db *DB) CreateStream(key []byte) *Stream { return db.newStreamAt(key) }

// XAdd is XADD. ok is false when the key is absent and NOMKSTREAM was
// given; trimmed is how many entries the trim removed. The caller sends
// the events.
func (db *DB) XAdd(key []byte, a *XAddArgs) (id StreamID, ok bool, trimmed int64, err error) {
	s, err := db.WriteStream(key)
	if err != nil {
		return id, false, 0, err
	}
	if s == nil {
		if a.NoMkStream {
			return id, false, 0, nil
		}
		s = db.newStreamAt(key)
	}
	if s.lastID == MaxStreamID {
		return id, true, 0, ErrStreamExhausted
	}
	switch {
	case !a.IDGiven:
		id.Ms = uint64(db.e.now)
		if id.Ms > s.lastID.Ms {
			id.Seq = 0
		} else {
			var ok bool
			if id, ok = s.lastID.Incr(); !ok {
				return id, true, 0, ErrStreamIDTooSmall
			}
		}
	case !a.SeqGiven:
		id = a.ID
		if s.lastID.Ms == id.Ms {
			if s.lastID.Seq == ^uint64(0) {
				return id, true, 0, ErrStreamIDTooSmall
			}
			id = StreamID{id.Ms, s.lastID.Seq + 1}
		}
	default:
		id = a.ID
	}
	if !s.lastID.Less(id) {
		return id, true, 0, ErrStreamIDTooSmall
	}
	s.appendEntry(id, a.Fields)
	e, _ := s.entries.Max()
	db.e.sink.PutItem(db.id, key, streamEntryItem(id), streamEntryValue(e))
	if a.Trim.Strategy != TrimNone {
		trimmed = db.trimStream(key, s, &a.Trim)
	}
	db.putStreamValue(key, s)
	db.modified(key)
	db.signalReady(key)
	return id, true, trimmed, nil
}

// trimStream trims and records the removed prefix.
func (db *DB) trimStream(key []byte, s *Stream, t *StreamTrim) int64 {
	before := s.FirstID()
	limit := t.Limit
	if limit < 0 {
		limit = s.approxTrimLimit()
	}
	n := s.trimCount(t.MaxLen, t.MinID, t.Strategy == TrimMinID, t.Approx, limit)
	if n == 0 {
		return 0
	}
	// Trimming removes a prefix: one range deletion of its records.
	to := []byte{streamItemEntry + 1}
	if first, ok := s.entries.Min(); ok {
		to = streamEntryItem(first.id)
	}
	db.e.sink.DeleteItemRange(db.id, key, streamEntryItem(before), to)
	return n
}

// XTrim is XTRIM: it returns the number of entries removed.
func (db *DB) XTrim(key []byte, t *StreamTrim) (int64, error) {
	s, err := db.WriteStream(key)
	if s == nil {
		return 0, err
	}
	n := db.trimStream(key, s, t)
	if n > 0 {
		db.putStreamValue(key, s)
		db.modified(key)
	}
	return n, nil
}

// XDel is XDEL: it returns the number of entries deleted.
func (db *DB) XDel(key []byte, ids []StreamID) (int, error) {
	s, err := db.WriteStream(key)
	if s == nil {
		return 0, err
	}
	n := 0
	for _, id := range ids {
		e, ok := s.entries.Get(&streamEntry{id: id})
		if !ok {
			continue
		}
		s.deleteEntry(e)
		if s.maxDeleted.Less(id) {
			s.maxDeleted = id
		}
		db.e.sink.DeleteItem(db.id, key, streamEntryItem(id))
		n++
	}
	if n > 0 {
		db.putStreamValue(key, s)
		db.modified(key)
	}
	return n, nil
}

// XSetID is XSETID; entriesAdded -1 and a zero maxDeleted leave those
// alone. It returns ErrNoSuchKey for a missing key.
func (db *DB) XSetID(key []byte, id StreamID, entriesAdded int64, maxDeleted StreamID) error {
	s, err := db.WriteStream(key)
	if err != nil {
		return err
	}
	if s == nil {
		return ErrNoSuchKey
	}
	if s.Len() > 0 {
		if id.Less(s.LastEntryID()) {
			return ErrXSetIDTooSmall
		}
		if entriesAdded != -1 && int64(s.Len()) > entriesAdded {
			return ErrXSetIDAdded
		}
	}
	s.lastID = id
	if entriesAdded != -1 {
		s.entriesAdded = uint64(entriesAdded)
	}
	if !maxDeleted.IsZero() {
		s.maxDeleted = maxDeleted
	}
	db.putStreamValue(key, s)
	db.streamChanged(key, false) // Redis does not signal the key modified
	return nil
}
