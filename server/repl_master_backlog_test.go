package server

import (
	"bytes"
	"math/rand"
	"testing"

	"github.com/revolver-db/revolver/resp"
)

// TestReplBacklogRing checks the ring against the plain stream it keeps the
// end of: writes of every size, around the wrap and past the whole size,
// tails of every length, and resizing both ways.
func TestReplBacklogRing(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	b := newReplBacklog(1) // raised to the minimum
	if b.size != replBacklogMin {
		t.Fatalf("size %d, want %d", b.size, replBacklogMin)
	}
	var stream []byte
	var held int64 // what the backlog must hold: a larger one cannot get back what a smaller one dropped
	check := func(what string) {
		t.Helper()
		if b.histlen != held {
			t.Fatalf("%s: histlen %d, want %d", what, b.histlen, held)
		}
		for _, n := range []int64{0, 1, held / 3, held - 1, held} {
			if n < 0 {
				continue
			}
			if got, want := b.appendTail(nil, n), stream[int64(len(stream))-n:]; !bytes.Equal(got, want) {
				t.Fatalf("%s: the last %d bytes differ", what, n)
			}
		}
	}
	for i := 0; i < 2000; i++ {
		n := r.Intn(300)
		switch i % 200 {
		case 50:
			n = b.size + r.Intn(100) // more than the whole backlog at once
		case 120:
			b = b.resized(int64(replBacklogMin + r.Intn(3*replBacklogMin)))
			held = min(held, int64(b.size))
			check("after a resize")
		}
		p := make([]byte, n)
		r.Read(p)
		b.write(p)
		stream = append(stream, p...)
		held = min(held+int64(n), int64(b.size))
		check("after a write")
	}
	if len(b.buf) > b.size {
		t.Errorf("buffer %d bytes for a size of %d", len(b.buf), b.size)
	}
}

func TestAppendMultibulk(t *testing.T) {
	got := resp.AppendCommand(nil, []byte("SET"), []byte("k"), []byte(""))
	if want := "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$0\r\n\r\n"; string(got) != want {
		t.Errorf("%q, want %q", got, want)
	}
}
