package engine

import (
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
// restore again. The seeds (run by plain go test) are dumps of every type
// and encoding, Revolver's own types included, and corrupt payloads.
func FuzzRestore(f *testing.F) {
	e := New(Options{Clock: NewManualClock(time.UnixMilli(1_700_000_000_000))})
	e.Lock()
	defer e.Unlock()
	fillDumpSamples(e.DB(0))
	for _, k := range sampleKeys(e.DB(0)) {
		p := DumpPayload(e.DB(0).Peek(b(k)))
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
		again, err := e.ParseDumpPayload(DumpPayload(obj))
		if _, native := obj.(keyBound); native && err != nil {
			// A forged native record may be one the family would never
			// write (a room holding more than its limit): refusing its dump
			// is fine, as long as nothing panicked.
			return
		}
		if err != nil {
			t.Fatalf("the dump of a restored %s/%s does not restore: %v", obj.Type(), obj.Encoding(), err)
		}
		if again.Type() != obj.Type() {
			t.Fatalf("type %s came back as %s", obj.Type(), again.Type())
		}
		// Stored under a key, a native value builds its indexes and
		// scheduler entries (attached): that must hold too.
		db := e.DB(1)
		db.Restore(b("k"), again, RestoreOptions{Replace: true, IdleTime: -1})
		if _, _, ok := db.DumpKey(b("k")); !ok {
			t.Fatal("restored key missing")
		}
		obj.MemoryUsage()
	})
}
