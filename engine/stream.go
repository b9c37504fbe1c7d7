package engine

import (
	"encoding/binary"

	"github.com/tidwall/btree"
)

// TypeStream is the stream type. Persisted: never renumber.
const TypeStream Type = 11

// Stream is a Redis stream. Entries live in a B-tree ordered by id. Redis
// packs entries into listpack nodes of stream-node-max-entries entries or
// stream-node-max-bytes bytes, and that packing is visible: approximate
// trimming (MAXLEN ~, MINID ~) removes only whole nodes. So each entry
// names its node, and a node keeps the counters Redis's listpack header
// keeps (live and deleted entries, the bytes of the listpack), which
// decide when XADD opens the next node exactly as Redis would.
type Stream struct {
	objHeader
	entries      *btree.BTreeG[*streamEntry]
	nodes        *btree.BTreeG[*streamNode]
	lastID       StreamID
	maxDeleted   StreamID
	entriesAdded uint64
	groups       *btree.BTreeG[*StreamGroup] // by name, as Redis's rax orders them
	lim          *Limits                     // the engine's node limits (CONFIG SET changes them)
}

// streamEntry is one entry: its id, its node, and its field/value pairs
// packed into one allocation (each a uvarint length and the bytes, which
// is also the tail of its item record): 48 bytes and the data per entry,
// where a slice per field cost another 24 bytes each.
type streamEntry struct {
	id   StreamID
	node *streamNode
	data []byte
}

// fields unpacks the field/value pairs (flat: field, value, ...); they
// alias the entry.
func (e *streamEntry) fields() [][]byte {
	out := make([][]byte, 0, 4)
	for b := e.data; len(b) > 0; {
		n, k := binary.Uvarint(b)
		b = b[k:]
		out = append(out, b[:n:n])
		b = b[n:]
	}
	return out
}

// streamNode mirrors one of Redis's listpack nodes: the id of its first
// entry (the master id), the fields of that entry (the master fields),
// its live and deleted entries, and body, the bytes of its listpack other
// than the header, the two counters and the terminator.
type streamNode struct {
	master       StreamID
	last         StreamID // the last entry appended, deleted or not
	masterFields [][]byte
	live         int
	deleted      int
	body         int
}

// streamListpackMaxSize is Redis's STREAM_LISTPACK_MAX_SIZE, the ceiling
// of stream-node-max-bytes.
const streamListpackMaxSize = 1 << 30

var defaultStreamLimits = DefaultLimits()

// nodeLimits are stream-node-max-bytes (0: the ceiling) and
// stream-node-max-entries (0: none) in force.
func (s *Stream) nodeLimits() (maxBytes, maxEntries int64) {
	l := s.lim
	if l == nil {
		l = &defaultStreamLimits
	}
	maxBytes, maxEntries = l.StreamNodeMaxBytes, l.StreamNodeMaxEntries
	if maxBytes <= 0 || maxBytes > streamListpackMaxSize {
		maxBytes = streamListpackMaxSize
	}
	return maxBytes, maxEntries
}

// approxTrimLimit is the work bound of a "~" trim given no LIMIT: 100
// nodes' worth of entries, within Redis's bounds.
func (s *Stream) approxTrimLimit() int64 {
	_, entries := s.nodeLimits()
	n := 100 * entries
	if n <= 0 {
		n = 10000
	}
	return min(n, 1000000)
}

func (s *Stream) loadLimits(l *Limits) { s.lim = l }

func streamEntryLess(a, b *streamEntry) bool { return a.id.Less(b.id) }
func streamNodeLess(a, b *streamNode) bool   { return a.master.Less(b.master) }
func streamGroupLess(a, b *StreamGroup) bool { return a.Name < b.Name }

// NewStream returns an empty stream.
func NewStream() *Stream {
	return &Stream{
		entries: btree.NewBTreeGOptions(streamEntryLess, btree.Options{NoLocks: true}),
		nodes:   btree.NewBTreeGOptions(streamNodeLess, btree.Options{NoLocks: true}),
		groups:  btree.NewBTreeGOptions(streamGroupLess, btree.Options{NoLocks: true}),
	}
}

// Type implements Object.
func (s *Stream) Type() Type { return TypeStream }

// Encoding implements Object.
func (s *Stream) Encoding() string { return "stream" }

// Len is the number of entries.
func (s *Stream) Len() int { return s.entries.Len() }

// LastID is the id of the last entry ever added (or set by XSETID).
func (s *Stream) LastID() StreamID { return s.lastID }

// MaxDeletedID is the largest id ever deleted.
func (s *Stream) MaxDeletedID() StreamID { return s.maxDeleted }

// EntriesAdded counts every entry ever added.
func (s *Stream) EntriesAdded() uint64 { return s.entriesAdded }

// FirstID is the first entry's id, 0-0 when empty.
func (s *Stream) FirstID() StreamID {
	if e, ok := s.entries.Min(); ok {
		return e.id
	}
	return StreamID{}
}

// LastEntryID is the last live entry's id, 0-0 when empty.
func (s *Stream) LastEntryID() StreamID {
	if e, ok := s.entries.Max(); ok {
		return e.id
	}
	return StreamID{}
}

// Range calls fn for the entries with ids in [start, end], ascending or
// (rev) descending, until fn returns false or count entries were visited
// (count 0: all).
func (s *Stream) Range(start, end StreamID, rev bool, count int, fn func(id StreamID, fields [][]byte) bool) {
	if end.Less(start) {
		return
	}
	n := 0
	visit := func(e *streamEntry) bool {
		if rev && e.id.Less(start) || !rev && end.Less(e.id) {
			return false
		}
		n++
		return fn(e.id, e.fields()) && (count == 0 || n < count)
	}
	if rev {
		s.entries.Descend(&streamEntry{id: end}, visit)
	} else {
		s.entries.Ascend(&streamEntry{id: start}, visit)
	}
}

// Get returns an entry's fields.
func (s *Stream) Get(id StreamID) ([][]byte, bool) {
	e, ok := s.entries.Get(&streamEntry{id: id})
	if !ok {
		return nil, false
	}
	return e.fields(), true
}

// lpIntSize is the bytes a listpack integer element takes, backlen included.
func lpIntSize(v int64) int {
	switch {
	case v >= 0 && v <= 127:
		return 2
	case v >= -4096 && v <= 4095:
		return 3
	case v >= -32768 && v <= 32767:
		return 4
	case v >= -8388608 && v <= 8388607:
		return 5
	case v >= -1<<31 && v <= 1<<31-1:
		return 6
	}
	return 10
}

// lpElemSize is the bytes lpAppend takes for v.
func lpElemSize(v []byte) int {
	if len(v) <= 20 {
		if i, ok := ParseInt(v); ok {
			return lpIntSize(i)
		}
	}
	n := len(v)
	var h int
	switch {
	case n < 64:
		h = 1
	case n < 4096:
		h = 2
	default:
		h = 5
	}
	return h + n + lpBacklenSize(uint64(h+n))
}

// bytes is the node's listpack size (lpBytes).
func (n *streamNode) bytes() int {
	return lpHeaderSize + 1 + lpIntSize(int64(n.live)) + lpIntSize(int64(n.deleted)) + n.body
}

// newStreamNode opens a node whose first entry has id and fields.
func newStreamNode(id StreamID, fields [][]byte) *streamNode {
	n := &streamNode{master: id}
	nf := len(fields) / 2
	n.body = lpIntSize(int64(nf)) + lpIntSize(0)
	n.masterFields = make([][]byte, nf)
	for i := 0; i < nf; i++ {
		n.masterFields[i] = append([]byte(nil), fields[2*i]...)
		n.body += lpElemSize(fields[2*i])
	}
	return n
}

// entryBytes is what appending an entry adds to node n's listpack.
func (n *streamNode) entryBytes(id StreamID, fields [][]byte) int {
	nf := len(fields) / 2
	same := nf == len(n.masterFields)
	for i := 0; same && i < nf; i++ {
		same = string(fields[2*i]) == string(n.masterFields[i])
	}
	flags := int64(0)
	lpCount := int64(nf + 3)
	if same {
		flags = 2
	} else {
		lpCount += int64(nf + 1)
	}
	size := lpIntSize(flags) + lpIntSize(int64(id.Ms-n.master.Ms)) + lpIntSize(int64(id.Seq-n.master.Seq))
	if !same {
		size += lpIntSize(int64(nf))
	}
	for i := 0; i < nf; i++ {
		if !same {
			size += lpElemSize(fields[2*i])
		}
		size += lpElemSize(fields[2*i+1])
	}
	return size + lpIntSize(lpCount)
}

// packFields packs field/value pairs into one allocation.
func packFields(fields [][]byte) []byte {
	total := 0
	for _, f := range fields {
		total += len(f) + binary.MaxVarintLen32
	}
	b := make([]byte, 0, total)
	for _, f := range fields {
		b = binary.AppendUvarint(b, uint64(len(f)))
		b = append(b, f...)
	}
	return b[:len(b):len(b)]
}

// appendEntry adds an entry with an id above lastID, placing it in the
// tail node or opening a new one as Redis's streamAppendItem does.
func (s *Stream) appendEntry(id StreamID, fields [][]byte) {
	tail, _ := s.nodes.Max()
	if tail != nil {
		total := 0
		for _, f := range fields {
			total += len(f)
		}
		maxBytes, maxEntries := s.nodeLimits()
		if int64(tail.bytes()+total) >= maxBytes || maxEntries > 0 && int64(tail.live+tail.deleted) >= maxEntries {
			tail = nil
		}
	}
	if tail == nil {
		tail = newStreamNode(id, fields)
		s.nodes.Set(tail)
	}
	tail.body += tail.entryBytes(id, fields)
	tail.live++
	tail.last = id
	s.entries.Set(&streamEntry{id: id, node: tail, data: packFields(fields)})
	s.lastID = id
	s.entriesAdded++
}

// deleteEntry removes one entry; a node left with no live entry goes, as
// Redis frees an emptied listpack.
func (s *Stream) deleteEntry(e *streamEntry) {
	s.entries.Delete(e)
	n := e.node
	n.live--
	n.deleted++
	if n.live == 0 {
		s.nodes.Delete(n)
	}
}

// trimCount trims from the head as Redis's streamTrim does (by length, or
// by id with byID) and returns how many entries went.
func (s *Stream) trimCount(maxLen int64, minID StreamID, byID bool, approx bool, limit int64) int64 {
	var deleted int64
	for {
		if !byID && int64(s.Len()) <= maxLen {
			break
		}
		n, ok := s.nodes.Min()
		if !ok {
			break
		}
		entries := int64(n.live)
		if limit > 0 && deleted+entries > limit {
			break
		}
		var removeNode bool
		if byID {
			removeNode = n.last.Less(minID)
		} else {
			removeNode = int64(s.Len())-entries >= maxLen
		}
		if removeNode {
			s.removeNode(n)
			deleted += entries
			continue
		}
		if approx {
			break
		}
		// Remove entries from inside the first node, then stop.
		for {
			e, ok := s.entries.Min()
			if !ok || e.node != n {
				break
			}
			if byID && !e.id.Less(minID) || !byID && int64(s.Len()) <= maxLen {
				break
			}
			s.entries.Delete(e) // the node stays, even emptied, as in Redis
			n.live--
			n.deleted++
			deleted++
		}
		break
	}
	return deleted
}

// removeNode drops a whole node and its entries.
func (s *Stream) removeNode(n *streamNode) {
	var ids []*streamEntry
	s.entries.Ascend(&streamEntry{id: n.master}, func(e *streamEntry) bool {
		if e.node != n {
			return false
		}
		ids = append(ids, e)
		return true
	})
	for _, e := range ids {
		s.entries.Delete(e)
	}
	s.nodes.Delete(n)
}

// Clone implements Object.
func (s *Stream) Clone() Object {
	c := NewStream()
	c.lim = s.lim
	c.lastID, c.maxDeleted, c.entriesAdded = s.lastID, s.maxDeleted, s.entriesAdded
	nodes := map[*streamNode]*streamNode{}
	s.nodes.Scan(func(n *streamNode) bool {
		cn := *n
		nodes[n] = &cn
		c.nodes.Set(&cn)
		return true
	})
	s.entries.Scan(func(e *streamEntry) bool {
		c.entries.Set(&streamEntry{id: e.id, node: nodes[e.node], data: e.data}) // immutable: shared
		return true
	})
	s.groups.Scan(func(g *StreamGroup) bool {
		c.groups.Set(g.clone())
		return true
	})
	return c
}

// MemoryUsage implements Object: Redis's estimate is the listpacks' bytes,
// which the nodes track; the B-tree's items and groups add to it.
func (s *Stream) MemoryUsage() int {
	size := 128
	s.nodes.Scan(func(n *streamNode) bool {
		size += roundAlloc(n.bytes()) + 64
		return true
	})
	size += s.entries.Len() * 56 // the entry struct and its B-tree slot
	s.groups.Scan(func(g *StreamGroup) bool {
		size += g.memoryUsage()
		return true
	})
	return size
}

// NodeCount is the number of listpack nodes (XINFO's radix-tree-keys).
func (s *Stream) NodeCount() int { return s.nodes.Len() }

// RaxNodes is the number of nodes of the radix tree Redis would keep its
// listpacks in (XINFO's radix-tree-nodes): keys are the nodes' master ids
// as 16 big-endian bytes, and the tree is the compressed trie of them,
// with an empty root when there are none.
func (s *Stream) RaxNodes() int {
	if s.nodes.Len() == 0 {
		return 1
	}
	keys := make([][]byte, 0, s.nodes.Len())
	s.nodes.Scan(func(n *streamNode) bool {
		keys = append(keys, n.master.encode(nil))
		return true
	})
	return raxCount(keys, 0)
}

// raxCount counts the nodes of the compressed trie holding the sorted,
// equally long keys from depth on: a compressed node for a run of bytes
// all keys share, a branching node where they differ, a leaf at the end.
func raxCount(keys [][]byte, depth int) int {
	width := len(keys[0])
	if depth == width {
		return 1
	}
	first, last := keys[0], keys[len(keys)-1]
	common := 0
	for depth+common < width && first[depth+common] == last[depth+common] {
		common++
	}
	if common > 0 {
		return 1 + raxCount(keys, depth+common)
	}
	n := 1
	for i := 0; i < len(keys); {
		j := i
		for j < len(keys) && keys[j][depth] == keys[i][depth] {
			j++
		}
		n += raxCount(keys[i:j], depth+1)
		i = j
	}
	return n
}
