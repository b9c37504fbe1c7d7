package engine

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// logicalValue renders everything a value holds as text, so that two
// values compare whole: every element, field, score (to the bit: -0 is not
// 0), stream entry, node, group, PEL entry and consumer. The Redis types
// are read through their own accessors, not through the DUMP encoder nor
// the change records, so a bug in either cannot hide on both sides.
// Revolver's own types are their records (the DUMP payload carries exactly
// those) with their sizes as the type reports them.
func logicalValue(obj Object) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s/%s\n", obj.Type(), obj.Encoding())
	var lines []string // for the unordered types, sorted at the end
	switch v := obj.(type) {
	case *String:
		fmt.Fprintf(&sb, "%q\n", v.Bytes())
	case *List:
		fmt.Fprintf(&sb, "len %d\n", v.Len())
		v.Each(0, v.Len(), false, func(e []byte) { fmt.Fprintf(&sb, "%q\n", e) })
	case *Set:
		fmt.Fprintf(&sb, "len %d\n", v.Len())
		v.Each(func(m []byte) { lines = append(lines, strconv.Quote(string(m))) })
	case *Hash:
		fmt.Fprintf(&sb, "len %d\n", v.Len())
		v.Each(func(f, val []byte) { lines = append(lines, fmt.Sprintf("%q=%q", f, val)) })
	case *ZSet:
		fmt.Fprintf(&sb, "len %d\n", v.Len())
		v.walk(0, false, func(it zitem) bool {
			fmt.Fprintf(&sb, "%q %s\n", it.member, strconv.FormatFloat(it.score, 'g', -1, 64))
			return true
		})
	case *Stream:
		streamValue(&sb, v)
	default:
		nativeValue(&sb, obj)
	}
	slices.Sort(lines)
	for _, l := range lines {
		sb.WriteString(l)
		sb.WriteByte('\n')
	}
	return sb.String()
}

// streamValue: node masters and live counts count too, as approximate
// trimming and XINFO's radix-tree-keys see them; tombstones are not kept
// by the encoding (see TestStreamDumpRoundTrip), so not compared.
func streamValue(sb *strings.Builder, s *Stream) {
	fmt.Fprintf(sb, "len %d last %s maxdel %s added %d first %s\n",
		s.Len(), s.LastID(), s.MaxDeletedID(), s.EntriesAdded(), s.FirstID())
	s.nodes.Scan(func(n *streamNode) bool {
		fmt.Fprintf(sb, "node %s live %d\n", n.master, n.live)
		return true
	})
	s.Range(StreamID{}, MaxStreamID, false, 0, func(id StreamID, fields [][]byte) bool {
		fmt.Fprintf(sb, "entry %s %q\n", id, fields)
		return true
	})
	s.Groups(func(g *StreamGroup) {
		fmt.Fprintf(sb, "group %q last %s read %d pel %d consumers %d\n",
			g.Name, g.LastID, g.EntriesRead, g.PendingCount(), g.ConsumerCount())
		g.PendingRange(StreamID{}, MaxStreamID, func(p *PendingEntry) bool {
			owner := "<none>"
			if p.Consumer != nil {
				owner = p.Consumer.Name
			}
			fmt.Fprintf(sb, " pending %s %q time %d count %d\n", p.ID, owner, p.DeliveryTime, p.DeliveryCount)
			return true
		})
		g.Consumers(func(c *StreamConsumer) {
			fmt.Fprintf(sb, " consumer %q seen %d pel %d:", c.Name, c.SeenTime, c.PendingCount())
			c.PendingRange(StreamID{}, MaxStreamID, func(p *PendingEntry) bool {
				shared := ""
				if g.Pending(p.ID) != p {
					shared = "(not the group's)"
				}
				fmt.Fprintf(sb, " %s%s", p.ID, shared)
				return true
			})
			sb.WriteByte('\n')
		})
	})
}

func nativeValue(sb *strings.Builder, obj Object) {
	switch v := obj.(type) {
	case interface{ Len() int }:
		fmt.Fprintf(sb, "len %d\n", v.Len())
	case *UV:
		fmt.Fprintf(sb, "count %d\n", v.Count())
	}
	var c recordCapture
	obj.persist(&c, 0, nil)
	if p, ok := obj.(*Numpool); ok {
		// The token clock's ceiling is what a restart resumes from, and it
		// raises it by design: the pool's value is its lease total.
		fmt.Fprintf(sb, "numpool lease ends %d\n", p.leaseEnds)
	} else {
		fmt.Fprintf(sb, "record %d %q\n", c.t, c.payload)
	}
	items := make([]string, 0, len(c.items))
	for _, it := range c.items {
		items = append(items, fmt.Sprintf("item %q=%q", it[0], it[1]))
	}
	slices.Sort(items)
	for _, it := range items {
		sb.WriteString(it)
		sb.WriteByte('\n')
	}
}

// dumpDeterministic: a value whose DUMP bytes are a function of its
// contents. Hashtables and Revolver's own types may list their contents
// in another order after a round trip (the bytes then differ only in
// order, so not in length).
func dumpDeterministic(obj Object) bool {
	return obj.Type().nativeExcluded() && obj.Encoding() != "hashtable" || obj.Type() == TypeStream
}

// sameValue fails when a and b hold different values, showing the first
// line that differs.
func sameValue(t testing.TB, what string, a, b Object) {
	t.Helper()
	va, vb := logicalValue(a), logicalValue(b)
	if va == vb {
		return
	}
	la, lb := strings.Split(va, "\n"), strings.Split(vb, "\n")
	for i := range max(len(la), len(lb)) {
		var x, y string
		if i < len(la) {
			x = la[i]
		}
		if i < len(lb) {
			y = lb[i]
		}
		if x != y {
			t.Fatalf("%s: values differ at line %d (of %d and %d):\n  %.300s\n  %.300s", what, i+1, len(la), len(lb), x, y)
		}
	}
}

// fillStreamDumpSamples stores streams with what the RDB stream encoding
// carries: several nodes, entries with the master's fields and with
// others, deletions (of a node's master and of the last entry), groups
// with and without a PEL, claimed entries with retry counts and explicit
// delivery times, consumers with and without pending entries.
func fillStreamDumpSamples(t testing.TB, db *DB) {
	key := b("stream")
	for i := 1; i <= 230; i++ {
		fields := [][]byte{b("f"), b(strconv.Itoa(i))}
		if i%7 == 0 {
			fields = [][]byte{b("g"), b("x"), b("h"), b(strconv.Itoa(-i * 70000))}
		}
		if _, _, _, err := db.XAdd(key, &XAddArgs{ID: StreamID{uint64(1000 + i), uint64(i % 3)}, IDGiven: true, SeqGiven: true, Fields: fields}); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := db.XDel(key, []StreamID{{1001, 1}, {1101, 2}, {1230, 2}, {1150, 0}}); err != nil || n != 4 {
		t.Fatalf("XDEL: %d, %v", n, err)
	}
	s, err := db.ReadStream(key)
	if err != nil || s == nil {
		t.Fatalf("stream: %v", err)
	}
	// "late" starts past the first entries with its entries-read unknown.
	for _, g := range []struct {
		name string
		last StreamID
		read int64
	}{{"g", StreamID{}, 0}, {"h", StreamID{}, 0}, {"late", StreamID{1100, 1}, -1}} {
		if err := db.XGroupCreate(key, s, b(g.name), &g.last, g.read); err != nil {
			t.Fatal(err)
		}
	}
	g, h := s.Group(b("g")), s.Group(b("h"))
	db.XReadGroupNew(key, s, g, b("alice"), 5, false)
	db.XReadGroupNew(key, s, g, b("bob"), 7, false)
	db.XReadGroupNew(key, s, h, b("carol"), 3, false)
	db.XAck(key, g, []StreamID{{1003, 0}})
	now := db.e.Now()
	db.XClaim(key, s, g, b("bob"), []StreamID{{1002, 2}}, &XClaimArgs{DeliveryTime: now - 12345, RetryCount: 9})
	db.XClaim(key, s, g, b("dave"), []StreamID{{1004, 1}, {1005, 2}}, &XClaimArgs{DeliveryTime: now - 777, RetryCount: -1})
	db.XGroupCreateConsumer(key, h, b("idle"))
	// A stream whose entries are all gone keeps its ids and counters.
	gone := b("stream-empty")
	for i := 1; i <= 3; i++ {
		if _, _, _, err := db.XAdd(gone, &XAddArgs{ID: StreamID{uint64(i), 0}, IDGiven: true, SeqGiven: true, Fields: [][]byte{b("a"), bytes.Repeat(b("v"), 40)}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.XDel(gone, []StreamID{{1, 0}, {2, 0}, {3, 0}}); err != nil {
		t.Fatal(err)
	}
}
