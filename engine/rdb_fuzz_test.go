package engine

import (
	"bytes"
	"encoding/binary"
	"testing"
	"time"
)

// withFooter appends the RDB version and the CRC-64, so that the fuzzer's
// mutations reach the decoders instead of stopping at the checksum.
func withFooter(body []byte) []byte {
	p := binary.LittleEndian.AppendUint16(append([]byte(nil), body...), RDBVersion)
	return binary.LittleEndian.AppendUint64(p, rdbCRC64(p))
}

// FuzzRestore feeds RESTORE arbitrary object bytes: it must never panic
// nor allocate without bound, and whatever it accepts must dump and
// restore again to the same whole value (every element, score, stream
// entry, group, PEL entry and consumer), with the same bytes where the
// encoding is deterministic. The seeds (run by plain go test) are dumps of
// every type and encoding, Revolver's own types and streams included, each
// first checked to restore to the value it was dumped from, and corrupt
// payloads.
func FuzzRestore(f *testing.F) {
	e := New(Options{Clock: NewManualClock(time.UnixMilli(1_700_000_000_000))})
	e.Lock()
	defer e.Unlock()
	fillDumpSamples(e.DB(0))
	fillStreamDumpSamples(f, e.DB(0))
	for _, k := range sampleKeys(e.DB(0)) {
		v := e.DB(0).Peek(b(k))
		p := DumpPayload(v)
		got, err := e.ParseDumpPayload(p)
		if err != nil {
			f.Fatalf("%s: its own dump does not restore: %v", k, err)
		}
		sameValue(f, k+" through DUMP/RESTORE", v, got)
		f.Add(p[:len(p)-10])
	}
	for _, seed := range [][]byte{
		{}, {0xC8}, {0x00, 0xC3, 0x05, 0x20, 0x00, 'a'}, {0x12, 0x00}, {0x12, 0x01, 0x02, 0x07, 0x07, 0, 0, 0, 0, 0, 0xFF},
		{0x0B, 0x0A, 0x02, 0, 0, 0, 1, 0, 0, 0, 5, 0}, {0x07, 0x81, 0, 0, 0, 0, 0, 0, 0, 0},
		{0x0D, 0x0B, 0x0B, 0, 0, 0, 0x0A, 0, 0, 0, 0, 0, 0xFF}, {0x09, 0x04, 0x01, 0x01, 'f', 0x01, 0x00, 'v', 0xFF},
		{0x03, 0x01, 0x01, 'a', 0xFD}, {0x00, 0x81, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF},
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		obj, err := e.ParseDumpPayload(withFooter(body))
		if err != nil {
			if err != ErrBadDataFormat {
				t.Fatalf("a payload with a valid footer refused with %v", err)
			}
			return
		}
		dump := DumpPayload(obj)
		again, err := e.ParseDumpPayload(dump)
		if _, native := obj.(keyBound); native && err != nil {
			// A forged native record may be one the family would never
			// write (a room holding more than its limit): refusing its dump
			// is fine, as long as nothing panicked.
			return
		}
		if err != nil {
			t.Fatalf("the dump of a restored %s/%s does not restore: %v", obj.Type(), obj.Encoding(), err)
		}
		sameValue(t, "restored value and the restore of its dump", obj, again)
		redump := DumpPayload(again)
		if dumpDeterministic(obj) && !bytes.Equal(redump, dump) || len(redump) != len(dump) {
			t.Fatalf("%s/%s: dumped again as %d bytes, first %d (differing)", obj.Type(), obj.Encoding(), len(redump), len(dump))
		}
		// Stored under a key with a TTL and an idle time, a native value
		// builds its indexes and scheduler entries (attached): the key must
		// hold the same value, its deadline and its access time.
		db := e.DB(1)
		db.Restore(b("k"), again, RestoreOptions{Replace: true, TTL: 5000, IdleTime: 7, Freq: -1})
		if v := db.Peek(b("k")); v == nil || db.IdleTime(v) != 7 {
			t.Fatal("restored key missing or not idle for 7 s")
		}
		stored, at, ok := db.DumpKey(b("k"))
		if !ok || at != e.Now()+5000 {
			t.Fatalf("restored key: found %v, deadline %d, want %d", ok, at, e.Now()+5000)
		}
		back, err := e.ParseDumpPayload(stored)
		if err != nil {
			t.Fatalf("the stored key's dump does not restore: %v", err)
		}
		// Attaching may move a native value's bookkeeping on (a numpool's
		// token ceiling, as a restart does), so the stored value compares
		// with what it became.
		sameValue(t, "the stored key", again, back)
		obj.MemoryUsage()
	})
}
