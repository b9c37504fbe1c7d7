package flat

import (
	"bytes"
	"strings"
	"testing"
)

func TestRecordRoundTrip(t *testing.T) {
	for _, kl := range []int{0, 1, 10, 31, 32, 200, 5000} {
		for _, vl := range []int{0, 1, 32, 127, 128, 20000} {
			for _, exp := range []int64{0, 1, -5, 1767225600000} {
				key := []byte(strings.Repeat("k", kl))
				val := bytes.Repeat([]byte{0xa5}, vl)
				size := RecordSize(kl, vl, exp != 0)
				buf := make([]byte, size+7)
				r := PutRecord(buf, 9, 0xabcdef, exp, key, val)
				if r.Len() != size || len(r) != size {
					t.Fatalf("k%d v%d e%d: len %d/%d, RecordSize %d", kl, vl, exp, r.Len(), len(r), size)
				}
				// The same bytes read through a longer slot.
				for _, rr := range []Record{r, Record(buf)} {
					k, v := rr.KeyValue()
					if rr.Type() != 9 || rr.Clock() != 0xabcdef || rr.Expire() != exp ||
						rr.HasExpire() != (exp != 0) || rr.IsRef() || rr.Ref() != 0 ||
						!bytes.Equal(rr.Key(), key) || !bytes.Equal(rr.Value(), val) ||
						!bytes.Equal(k, key) || !bytes.Equal(v, val) {
						t.Fatalf("k%d v%d e%d: decoded wrong", kl, vl, exp)
					}
				}
				rs := RefRecordSize(kl, exp != 0)
				rb := make([]byte, rs)
				rr := PutRefRecord(rb, 3, 7, exp, key, 1<<40+12345)
				if rr.Len() != rs || !rr.IsRef() || rr.Ref() != 1<<40+12345 || rr.Value() != nil ||
					!bytes.Equal(rr.Key(), key) || rr.Expire() != exp || rr.Type() != 3 || rr.Clock() != 7 {
					t.Fatalf("ref record k%d e%d decoded wrong", kl, exp)
				}
			}
		}
	}
}

func TestRecordHeadline(t *testing.T) {
	// 10-byte key and 32-byte value: 48 bytes, the 48-byte class.
	if n := RecordSize(10, 32, false); n != 48 || SlotSize(n) != 48 {
		t.Fatalf("10+32 record: %d bytes, slot %d", n, SlotSize(n))
	}
	if n := RecordSize(10, 100, false); n != 116 || SlotSize(n) != 120 {
		t.Fatalf("10+100 record: %d bytes, slot %d", n, SlotSize(n))
	}
}

func TestRecordInPlace(t *testing.T) {
	buf := make([]byte, 64)
	r := PutRecord(buf, 1, 5, 1000, []byte("key"), []byte("value"))
	r.SetType(2)
	r.SetClock(1<<24 + 77) // wraps to 24 bits
	if !r.SetExpire(2000) {
		t.Fatal("SetExpire on a record with a deadline")
	}
	if r.SetExpire(0) || r.SetRef(1) {
		t.Fatal("SetExpire(0) or SetRef on a value record succeeded")
	}
	copy(r.Value(), "VALUE")
	if r.Type() != 2 || r.Clock() != 77 || r.Expire() != 2000 || string(r.Key()) != "key" || string(r.Value()) != "VALUE" {
		t.Fatalf("after in-place updates: %d %d %d %q %q", r.Type(), r.Clock(), r.Expire(), r.Key(), r.Value())
	}
	r = PutRecord(buf, 1, 5, 0, []byte("key"), []byte("value"))
	if r.SetExpire(5) || r.Expire() != 0 {
		t.Fatal("SetExpire on a record without the field")
	}
	r = PutRefRecord(buf, 1, 5, 0, []byte("key"), 9)
	if !r.SetRef(10) || r.Ref() != 10 || string(r.Key()) != "key" {
		t.Fatal("SetRef")
	}
	// Views are capped: appending to one cannot overwrite the next field.
	r = PutRecord(buf, 1, 5, 0, []byte("key"), []byte("value"))
	if k := r.Key(); cap(k) != len(k) {
		t.Fatal("key view not capped")
	}
}

func TestRecordNoAllocs(t *testing.T) {
	buf := make([]byte, 64)
	key, val := []byte("0123456789"), []byte("01234567890123456789012345678901")
	var sink int
	allocs := testing.AllocsPerRun(100, func() {
		r := PutRecord(buf, 1, 2, 3, key, val)
		r.SetClock(4)
		r.SetExpire(5)
		sink += len(r.Key()) + len(r.Value()) + int(r.Expire()) + r.Len()
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per encode and decode", allocs)
	}
	_ = sink
}
