package engine

import (
	"fmt"
	"strconv"
	"testing"
)

// streamShape lists a stream's nodes as master id, live and deleted
// entries and bytes: what decides approximate trimming and the next node.
func streamShape(s *Stream) string {
	out := ""
	s.nodes.Scan(func(n *streamNode) bool {
		out += fmt.Sprintf("[%s live=%d del=%d bytes=%d] ", n.master, n.live, n.deleted, n.bytes())
		return true
	})
	return out
}

func addEntries(t *testing.T, db *DB, key string, from, to int, fields func(i int) [][]byte) {
	t.Helper()
	for i := from; i <= to; i++ {
		a := &XAddArgs{ID: StreamID{uint64(i), 0}, IDGiven: true, SeqGiven: true, Fields: fields(i)}
		if _, _, _, err := db.XAdd([]byte(key), a); err != nil {
			t.Fatal(err)
		}
	}
}

// TestStreamNodes: nodes close at stream-node-max-entries entries (deleted
// ones count) or stream-node-max-bytes, as Redis's listpacks do.
func TestStreamNodes(t *testing.T) {
	f := newEngineFixture(t)
	same := func(i int) [][]byte { return [][]byte{[]byte("f"), []byte(strconv.Itoa(i))} }
	addEntries(t, f.db, "s", 1, 250, same)
	s, _ := f.db.ReadStream([]byte("s"))
	if s.nodes.Len() != 3 {
		t.Fatalf("nodes: %s", streamShape(s))
	}
	// The listpack of 100 entries of one field "f" and values i: header 6,
	// count and deleted, the master entry (1, "f", 0), each entry flags,
	// two deltas, a value and lp-count, and the terminator.
	n, _ := s.nodes.Min()
	want := 6 + 3 + 2 + 2 + 2 + 2 + 1
	for i := 1; i <= 100; i++ {
		want += 2 + lpIntSize(int64(i-1)) + 2 + lpIntSize(int64(i)) + 2
	}
	if n.bytes() != want-2+lpIntSize(100) {
		t.Fatalf("bytes %d, want %d", n.bytes(), want-2+lpIntSize(100))
	}
	// Large values close a node by bytes.
	big := func(i int) [][]byte { return [][]byte{[]byte("f"), make([]byte, 1500)} }
	addEntries(t, f.db, "b", 1, 7, big)
	b, _ := f.db.ReadStream([]byte("b"))
	if b.nodes.Len() != 4 { // 3042 bytes + 1500 reach 4096: two entries a node
		t.Fatalf("byte-limited nodes: %s", streamShape(b))
	}
	// Deleting every live entry of a node drops it; deleted entries count
	// towards the tail node's size.
	if _, err := f.db.XDel([]byte("s"), []StreamID{{201, 0}, {202, 0}}); err != nil {
		t.Fatal(err)
	}
	tail, _ := s.nodes.Max()
	if tail.live != 48 || tail.deleted != 2 {
		t.Fatalf("tail: %s", streamShape(s))
	}
	addEntries(t, f.db, "s", 251, 300, same)
	if s.nodes.Len() != 3 {
		t.Fatalf("after refill: %s", streamShape(s))
	}
	addEntries(t, f.db, "s", 301, 301, same)
	if s.nodes.Len() != 4 {
		t.Fatalf("after a full tail: %s", streamShape(s))
	}
}

// TestStreamRestartKeepsNodes: after a reload the nodes are the same, so
// approximate trimming and the next XADD behave as before.
func TestStreamRestartKeepsNodes(t *testing.T) {
	f := newEngineFixture(t)
	mixed := func(i int) [][]byte {
		if i%4 == 0 {
			return [][]byte{[]byte("g"), []byte("x"), []byte("h"), []byte(strconv.Itoa(i * 7))}
		}
		return [][]byte{[]byte("f"), []byte(strconv.Itoa(i))}
	}
	addEntries(t, f.db, "s", 1, 230, mixed)
	if _, err := f.db.XDel([]byte("s"), []StreamID{{1, 0}, {150, 0}, {229, 0}}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.db.XTrim([]byte("s"), &StreamTrim{Strategy: TrimMaxLen, MaxLen: 200}); err != nil {
		t.Fatal(err)
	}
	s, _ := f.db.ReadStream([]byte("s"))
	before := streamShape(s)
	g := f.restart(0)
	s2, _ := g.db.ReadStream([]byte("s"))
	if s2 == nil {
		t.Fatal("stream lost")
	}
	// Non-tail nodes keep their membership; only the tail's byte count and
	// deleted entries decide anything, and those are persisted.
	tail1, _ := s.nodes.Max()
	tail2, _ := s2.nodes.Max()
	if tail1.bytes() != tail2.bytes() || tail1.deleted != tail2.deleted || tail1.master != tail2.master {
		t.Fatalf("tail differs:\n%s\n%s", before, streamShape(s2))
	}
	if s.nodes.Len() != s2.nodes.Len() || s.Len() != s2.Len() || s.lastID != s2.lastID || s.maxDeleted != s2.maxDeleted ||
		s.entriesAdded != s2.entriesAdded {
		t.Fatalf("stream differs:\n%s\n%s", before, streamShape(s2))
	}
	n1, _ := f.db.XTrim([]byte("s"), &StreamTrim{Strategy: TrimMaxLen, MaxLen: 10, Approx: true, Limit: 10000})
	n2, _ := g.db.XTrim([]byte("s"), &StreamTrim{Strategy: TrimMaxLen, MaxLen: 10, Approx: true, Limit: 10000})
	if n1 != n2 || n1 == 0 {
		t.Fatalf("approximate trim: %d before restart, %d after", n1, n2)
	}
}

// TestParseStreamID covers Redis's string2ull corners.
func TestParseStreamID(t *testing.T) {
	for _, c := range []struct {
		in   string
		ok   bool
		want StreamID
	}{
		{"1-2", true, StreamID{1, 2}}, {"5", true, StreamID{5, 7}}, {"-", true, StreamID{}},
		{"+", true, MaxStreamID}, {" 5", true, StreamID{5, 7}}, {"+5-1", true, StreamID{5, 1}},
		{"18446744073709551615-0", true, StreamID{^uint64(0), 0}}, {"18446744073709551616", false, StreamID{}},
		{"1--1", false, StreamID{}}, {"1- -1", true, StreamID{1, ^uint64(0)}}, {"-1", false, StreamID{}}, {"", false, StreamID{}},
		{"1-", false, StreamID{}}, {"a", false, StreamID{}}, {"1-2-3", false, StreamID{}},
	} {
		id, _, err := ParseStreamID([]byte(c.in), 7, false, false)
		if (err == nil) != c.ok || c.ok && id != c.want {
			t.Errorf("%q: %v %v", c.in, id, err)
		}
	}
}

// TestStreamGroupsSurviveRestart: groups, consumers and both PELs come
// back from their item records, sharing their pending entries.
func TestStreamGroupsSurviveRestart(t *testing.T) {
	f := newEngineFixture(t)
	key := []byte("s")
	same := func(i int) [][]byte { return [][]byte{[]byte("f"), []byte(strconv.Itoa(i))} }
	addEntries(t, f.db, "s", 1, 10, same)
	s, _ := f.db.ReadStream(key)
	for _, name := range []string{"g", "h"} {
		if err := f.db.XGroupCreate(key, s, []byte(name), &StreamID{}, 0); err != nil {
			t.Fatal(err)
		}
	}
	g, h := s.Group([]byte("g")), s.Group([]byte("h"))
	f.db.XReadGroupNew(key, s, g, []byte("alice"), 3, false)
	f.db.XReadGroupNew(key, s, g, []byte("bob"), 4, false)
	f.db.XReadGroupNew(key, s, h, []byte("carol"), 2, true)
	f.db.XAck(key, g, []StreamID{{2, 0}})
	f.db.XClaim(key, s, g, []byte("bob"), []StreamID{{1, 0}}, &XClaimArgs{DeliveryTime: -1, RetryCount: 5})
	f.db.XGroupCreateConsumer(key, h, []byte("idle"))
	r := f.restart(0)
	s2, _ := r.db.ReadStream(key)
	dump := func(s *Stream) string {
		out := ""
		s.Groups(func(g *StreamGroup) {
			out += fmt.Sprintf("%s last=%s read=%d pel=%d;", g.Name, g.LastID, g.EntriesRead, g.PendingCount())
			g.Consumers(func(c *StreamConsumer) {
				out += fmt.Sprintf(" %s seen=%d:", c.Name, c.SeenTime)
				c.PendingRange(StreamID{}, MaxStreamID, func(p *PendingEntry) bool {
					if g.Pending(p.ID) != p {
						out += "(not shared)"
					}
					out += fmt.Sprintf(" %s/%d/%d", p.ID, p.DeliveryCount, p.DeliveryTime)
					return true
				})
			})
			out += "\n"
		})
		return out
	}
	if a, b := dump(s), dump(s2); a != b || a == "" {
		t.Fatalf("before:\n%s\nafter:\n%s", a, b)
	}
	if p := s2.Group([]byte("g")).Pending(StreamID{1, 0}); p == nil || p.Consumer.Name != "bob" || p.DeliveryCount != 5 {
		t.Fatalf("claimed entry: %+v", p)
	}
}

// TestStreamDumpRoundTrip: a stream with tombstones, groups and PELs
// survives its RDB encoding, and no truncation or flipped byte of it
// makes the reader panic.
func TestStreamDumpRoundTrip(t *testing.T) {
	f := newEngineFixture(t)
	key := []byte("s")
	mixed := func(i int) [][]byte {
		if i%3 == 0 {
			return [][]byte{[]byte("g"), []byte("x"), []byte("h"), []byte(strconv.Itoa(-i * 70000))}
		}
		return [][]byte{[]byte("f"), []byte(strconv.Itoa(i))}
	}
	addEntries(t, f.db, "s", 1, 150, mixed)
	s, _ := f.db.ReadStream(key)
	f.db.XDel(key, []StreamID{{3, 0}, {101, 0}})
	f.db.XGroupCreate(key, s, []byte("g"), &StreamID{}, 0)
	g := s.Group([]byte("g"))
	f.db.XReadGroupNew(key, s, g, []byte("alice"), 5, false)
	f.db.XReadGroupNew(key, s, g, []byte("bob"), 5, false)
	p := DumpPayload(s)
	lim := DefaultLimits()
	obj, err := decodeDump(p, &lim)
	if err != nil {
		t.Fatal(err)
	}
	s2 := obj.(*Stream)
	// Deleted entries are not written (Redis keeps them as tombstones), so
	// only the nodes' masters and live entries compare.
	live := func(s *Stream) string {
		out := ""
		s.nodes.Scan(func(n *streamNode) bool { out += fmt.Sprintf("%s/%d ", n.master, n.live); return true })
		return out
	}
	if live(s) != live(s2) || s2.Len() != s.Len() || s2.Group([]byte("g")).PendingCount() != 10 ||
		s2.lastID != s.lastID || s2.maxDeleted != s.maxDeleted || s2.entriesAdded != s.entriesAdded {
		t.Fatalf("round trip:\n%s\n%s", streamShape(s), streamShape(s2))
	}
	body := p[:len(p)-10]
	for i := 0; i < len(body); i++ {
		decodeDump(body[:i], &lim)
		c := append([]byte(nil), body...)
		c[i] ^= 0x5a
		decodeDump(c, &lim)
	}
}
