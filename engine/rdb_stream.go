package engine

import (
	"encoding/binary"
)

// Streams in Redis 7.0's RDB encoding (RDB_TYPE_STREAM_LISTPACKS_2): the
// listpack nodes keyed by their master id, the stream's ids and counters,
// then each consumer group with its PEL (id, delivery time and count) and
// its consumers (name, seen time, the ids they own). Redis 5/6 dumps
// (RDB_TYPE_STREAM_LISTPACKS) lack the counters and are read too.

const (
	rdbTypeStreamListpacks  = 15
	rdbTypeStreamListpacks2 = 19

	streamFlagDeleted    = 1
	streamFlagSameFields = 2
)

func (w *rdbWriter) stream(s *Stream) {
	w.b = append(w.b, rdbTypeStreamListpacks2)
	var nodes []*streamNode
	s.nodes.Scan(func(n *streamNode) bool {
		if n.live > 0 {
			nodes = append(nodes, n)
		}
		return true
	})
	w.length(uint64(len(nodes)))
	var key [16]byte
	for _, n := range nodes {
		w.str(n.master.encode(key[:0]))
		w.str(w.streamNode(s, n))
	}
	first := s.FirstID()
	for _, v := range []uint64{uint64(s.Len()), s.lastID.Ms, s.lastID.Seq, first.Ms, first.Seq,
		s.maxDeleted.Ms, s.maxDeleted.Seq, s.entriesAdded} {
		w.length(v)
	}
	w.length(uint64(s.groups.Len()))
	s.groups.Scan(func(g *StreamGroup) bool {
		w.str([]byte(g.Name))
		w.length(g.LastID.Ms)
		w.length(g.LastID.Seq)
		w.length(uint64(g.EntriesRead))
		w.length(uint64(g.pel.Len()))
		g.pel.Scan(func(p *PendingEntry) bool {
			w.b = p.ID.encode(w.b)
			w.b = binary.LittleEndian.AppendUint64(w.b, uint64(p.DeliveryTime))
			w.length(p.DeliveryCount)
			return true
		})
		w.length(uint64(g.consumers.Len()))
		g.consumers.Scan(func(c *StreamConsumer) bool {
			w.str([]byte(c.Name))
			w.b = binary.LittleEndian.AppendUint64(w.b, uint64(c.SeenTime))
			w.length(uint64(c.pel.Len()))
			c.pel.Scan(func(p *PendingEntry) bool {
				w.b = p.ID.encode(w.b)
				return true
			})
			return true
		})
		return true
	})
}

// streamNode lays out one node's live entries as Redis's listpack: the
// master entry (count, deleted, fields, 0), then per entry its flags, id
// deltas, fields (omitted when they are the master's), values and the
// count of its elements.
func (w *rdbWriter) streamNode(s *Stream, n *streamNode) []byte {
	lb := newLPBuilder(w.lp.b)
	lb.appendInt(int64(n.live))
	lb.appendInt(0)
	lb.appendInt(int64(len(n.masterFields)))
	for _, f := range n.masterFields {
		lb.appendString(f)
	}
	lb.appendInt(0)
	s.entries.Ascend(&streamEntry{id: n.master}, func(e *streamEntry) bool {
		if e.node != n {
			return false
		}
		fields := e.fields()
		nf := len(fields) / 2
		same := nf == len(n.masterFields)
		for i := 0; same && i < nf; i++ {
			same = string(fields[2*i]) == string(n.masterFields[i])
		}
		flags, count := int64(0), int64(nf+3)
		if same {
			flags = streamFlagSameFields
		} else {
			count += int64(nf + 1)
		}
		lb.appendInt(flags)
		lb.appendInt(int64(e.id.Ms - n.master.Ms))
		lb.appendInt(int64(e.id.Seq - n.master.Seq))
		if !same {
			lb.appendInt(int64(nf))
		}
		for i := 0; i < nf; i++ {
			if !same {
				lb.appendString(fields[2*i])
			}
			lb.appendString(fields[2*i+1])
		}
		lb.appendInt(count)
		return true
	})
	lp := lb.finish()
	w.lp.b = lp[:0]
	return lp
}

// streamElems reads a node's listpack into its elements (copied).
func streamElems(lp []byte) ([][]byte, error) {
	var elems [][]byte
	_, err := lpEach(lp, func(e []byte) error {
		elems = append(elems, append([]byte(nil), e...))
		return nil
	})
	return elems, err
}

// stream reads a stream; v2 is RDB_TYPE_STREAM_LISTPACKS_2.
func (r *rdbReader) stream(v2 bool) (Object, error) {
	s := NewStream()
	nodes, err := r.length()
	if err != nil {
		return nil, err
	}
	var last StreamID // the last entry read, deleted or not
	for i := uint64(0); i < nodes; i++ {
		key, err := r.str()
		if err != nil || len(key) != 16 {
			return nil, errBadDump
		}
		lp, err := r.str()
		if err != nil {
			return nil, err
		}
		master := decodeStreamID(key)
		if i > 0 && !last.Less(master) {
			return nil, errBadDump
		}
		if last, err = s.loadRDBNode(master, lp, last, i == 0); err != nil {
			return nil, err
		}
	}
	var meta [8]uint64
	n := 3
	if v2 {
		n = 8
	}
	for i := 0; i < n; i++ {
		if meta[i], err = r.length(); err != nil {
			return nil, err
		}
	}
	if meta[0] != uint64(s.Len()) {
		return nil, errBadDump
	}
	s.lastID = StreamID{meta[1], meta[2]}
	if s.Len() > 0 && s.lastID.Less(s.LastEntryID()) {
		return nil, errBadDump
	}
	if v2 {
		s.maxDeleted = StreamID{meta[5], meta[6]}
		s.entriesAdded = meta[7]
	} else {
		s.entriesAdded = uint64(s.Len())
	}
	groups, err := r.length()
	if err != nil {
		return nil, err
	}
	for ; groups > 0; groups-- {
		if err := r.streamGroup(s, v2); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// loadRDBNode adds one node's entries; prev is the last id before it.
func (s *Stream) loadRDBNode(master StreamID, lp []byte, prev StreamID, first bool) (StreamID, error) {
	elems, err := streamElems(lp)
	if err != nil || len(elems) < 4 {
		return prev, errBadDump
	}
	num := func(i int) (int64, bool) {
		if i >= len(elems) {
			return 0, false
		}
		return ParseInt(elems[i])
	}
	live, ok1 := num(0)
	deleted, ok2 := num(1)
	nf, ok3 := num(2)
	if !ok1 || !ok2 || !ok3 || live < 0 || deleted < 0 || nf <= 0 || 3+int(nf)+1 > len(elems) {
		return prev, errBadDump
	}
	n := &streamNode{master: master, masterFields: elems[3 : 3+nf]}
	if z, ok := num(3 + int(nf)); !ok || z != 0 {
		return prev, errBadDump
	}
	p := 4 + int(nf)
	var gotLive, gotDeleted int64
	for p < len(elems) {
		start := p
		flags, ok1 := num(p)
		msd, ok2 := num(p + 1)
		seqd, ok3 := num(p + 2)
		if !ok1 || !ok2 || !ok3 {
			return prev, errBadDump
		}
		p += 3
		id := StreamID{master.Ms + uint64(msd), master.Seq + uint64(seqd)}
		if (!first || gotLive+gotDeleted > 0) && !prev.Less(id) || id.Less(master) {
			return prev, errBadDump
		}
		prev = id
		var fields [][]byte
		if flags&streamFlagSameFields != 0 {
			if p+int(nf) > len(elems) {
				return prev, errBadDump
			}
			for i := 0; i < int(nf); i++ {
				fields = append(fields, n.masterFields[i], elems[p+i])
			}
			p += int(nf)
		} else {
			k, ok := num(p)
			if !ok || k <= 0 || p+1+2*int(k) > len(elems) {
				return prev, errBadDump
			}
			fields = elems[p+1 : p+1+2*int(k)]
			p += 1 + 2*int(k)
		}
		if c, ok := num(p); !ok || c != int64(p-start) {
			return prev, errBadDump
		}
		p++
		n.last = id
		if flags&streamFlagDeleted != 0 {
			gotDeleted++
			continue
		}
		gotLive++
		s.entries.Set(&streamEntry{id: id, node: n, data: packFields(fields)})
	}
	if gotLive != live || gotDeleted != deleted || live+deleted == 0 {
		return prev, errBadDump
	}
	n.live, n.deleted = int(live), int(deleted)
	n.body = len(lp) - lpHeaderSize - 1 - lpIntSize(live) - lpIntSize(deleted)
	if live > 0 {
		s.nodes.Set(n)
	}
	return prev, nil
}

// streamGroup reads one consumer group.
func (r *rdbReader) streamGroup(s *Stream, v2 bool) error {
	name, err := r.str()
	if err != nil {
		return err
	}
	if s.Group(name) != nil {
		return errBadDump
	}
	var ms, seq, read uint64
	if ms, err = r.length(); err == nil {
		if seq, err = r.length(); err == nil && v2 {
			read, err = r.length()
		}
	}
	if err != nil {
		return err
	}
	g := newStreamGroup(string(name), StreamID{ms, seq}, int64(read))
	if !v2 {
		g.EntriesRead = s.estimateEntriesRead(g.LastID)
	}
	s.groups.Set(g)
	pel, err := r.length()
	if err != nil {
		return err
	}
	for ; pel > 0; pel-- {
		raw, err := r.take(24)
		if err != nil {
			return err
		}
		p := &PendingEntry{ID: decodeStreamID(raw), DeliveryTime: int64(binary.LittleEndian.Uint64(raw[16:]))}
		if p.DeliveryCount, err = r.length(); err != nil {
			return err
		}
		if g.Pending(p.ID) != nil {
			return errBadDump
		}
		g.pel.Set(p)
	}
	consumers, err := r.length()
	if err != nil {
		return err
	}
	for ; consumers > 0; consumers-- {
		cname, err := r.str()
		if err != nil {
			return err
		}
		if g.Consumer(cname) != nil {
			return errBadDump
		}
		seen, err := r.take(8)
		if err != nil {
			return err
		}
		c := g.getOrAddConsumer(string(cname), int64(binary.LittleEndian.Uint64(seen)))
		owned, err := r.length()
		if err != nil {
			return err
		}
		for ; owned > 0; owned-- {
			raw, err := r.take(16)
			if err != nil {
				return err
			}
			p := g.Pending(decodeStreamID(raw))
			if p == nil || p.Consumer != nil {
				return errBadDump
			}
			p.Consumer = c
			c.pel.Set(p)
		}
	}
	// Every pending entry must have its consumer (Redis's deep check).
	ok := true
	g.pel.Scan(func(p *PendingEntry) bool {
		ok = p.Consumer != nil
		return ok
	})
	if !ok {
		return errBadDump
	}
	return nil
}
