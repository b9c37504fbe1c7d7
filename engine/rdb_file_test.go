package engine

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/revolver-db/revolver/flat"
)

const rdbTestNow = 1_700_000_000_000

// rdbSourceEngine is an engine, its lock held, with a key of every type and
// encoding in database 0 (Revolver's own types and streams with groups
// included), big and compressible strings, HyperLogLogs, deadlines, and keys
// in databases 3 and 15.
func rdbSourceEngine(t testing.TB) *Engine {
	e := New(Options{Clock: NewManualClock(time.UnixMilli(rdbTestNow))})
	e.Lock()
	t.Cleanup(e.Unlock)
	db := e.DB(0)
	fillDumpSamples(db)
	fillStreamDumpSamples(t, db)
	db.SetString(b("big"), bytes.Repeat(b("compress me "), 1000), SetOptions{})
	db.SetString(b("random-ish"), []byte(strconv.FormatUint(0x9E3779B97F4A7C15, 36)+strings.Repeat("z", 30)), SetOptions{})
	db.SetString(b("inline-25"), bytes.Repeat(b("ab"), 13), SetOptions{})
	db.SetString(b("12345"), b("an integer key"), SetOptions{ExpireAt: rdbTestNow + 60_000})
	db.PFAdd(b("hll-sparse"), [][]byte{b("a"), b("b")})
	var many [][]byte
	for i := range 3000 {
		many = append(many, b(strconv.Itoa(i)))
	}
	db.PFAdd(b("hll-dense"), many)
	db.SAdd(b("intset-big"), many[:400])
	db.SetExpire(b("list"), rdbTestNow+3_600_000)
	db.SetExpire(b("hht"), rdbTestNow+1)
	db.SetExpire(b("delay"), rdbTestNow+90_000)
	e.DB(3).SetString(b("k3"), b("v3"), SetOptions{ExpireAt: rdbTestNow + 5000})
	e.DB(3).HSet(b("h3"), [][]byte{b("f"), b("v")})
	e.DB(15).ListPush(b("l15"), [][]byte{b("x"), b("y")}, false, false)
	e.DB(15).QueuePush(b("q15"), b("job"), QueuePushArgs{Priority: 1})
	return e
}

func writeRDB(t testing.TB, e *Engine, o RDBWriteOptions) ([]byte, RDBWriteResult) {
	t.Helper()
	var buf bytes.Buffer
	res, err := e.WriteRDB(&buf, o)
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), res
}

// loadRDB loads file (or what r reads) into a fresh engine on the test
// clock, its lock held.
func loadRDB(t testing.TB, file []byte, r io.Reader, o RDBLoadOptions) (*Engine, RDBLoadResult, error) {
	t.Helper()
	return loadRDBAt(t, rdbTestNow, file, r, o)
}

func loadRDBAt(t testing.TB, now int64, file []byte, r io.Reader, o RDBLoadOptions) (*Engine, RDBLoadResult, error) {
	t.Helper()
	e := New(Options{Clock: NewManualClock(time.UnixMilli(now))})
	e.Lock()
	t.Cleanup(e.Unlock)
	if r == nil {
		r = bytes.NewReader(file)
	}
	res, err := e.LoadRDB(r, o)
	return e, res, err
}

// sameKeyspace compares every key of every database but those skip names,
// without touching or expiring anything: its deadline, and its value by its
// DUMP payload (by content where the payload's order may vary). The value
// expected is the one RESTORE stores from want's DUMP: a string comes back
// embstr, a native family indexes its records.
func sameKeyspace(t testing.TB, want, got *Engine, skip func(Type) bool) {
	t.Helper()
	restored := New(Options{Databases: 1, Clock: NewManualClock(time.UnixMilli(want.now))})
	restored.Lock()
	defer restored.Unlock()
	rdb := restored.DB(0)
	for i := range want.dbs {
		dw, dg := want.dbs[i], got.dbs[i]
		n := 0
		dw.keys.recs.ForEach(func(rw flat.Record) bool {
			key := string(rw.Key())
			if skip != nil && skip(recType(rw)) {
				return true
			}
			n++
			rg := dg.keys.recs.Get([]byte(key))
			if rg == nil {
				t.Errorf("db %d: key %q missing", i, key)
				return true
			}
			if rw.Expire() != rg.Expire() {
				t.Errorf("db %d key %q: deadline %d, want %d", i, key, rg.Expire(), rw.Expire())
			}
			obj, err := restored.ParseDumpPayload(DumpPayload(dw.keys.object(rw)))
			if err != nil {
				t.Fatalf("db %d key %q: %v", i, key, err)
			}
			rdb.Restore([]byte(key), obj, RestoreOptions{Replace: true, IdleTime: -1, Freq: -1})
			ow, og := rdb.Peek([]byte(key)), dg.keys.object(rg)
			if ow.Type() != og.Type() || ow.Encoding() != og.Encoding() {
				t.Errorf("db %d key %q: %s/%s, want %s/%s", i, key, og.Type(), og.Encoding(), ow.Type(), ow.Encoding())
				return true
			}
			if dumpDeterministic(ow) {
				if pw, pg := DumpPayload(ow), DumpPayload(og); !bytes.Equal(pw, pg) {
					t.Errorf("db %d key %q: DUMP payloads differ\n want %.200q\n got  %.200q", i, key, pw, pg)
				}
			} else {
				sameValue(t, fmt.Sprintf("db %d key %q", i, key), ow, og)
			}
			return true
		})
		if dg.Len() != n {
			t.Errorf("db %d: %d keys, want %d", i, dg.Len(), n)
		}
	}
}

func TestRDBFileRoundTrip(t *testing.T) {
	src := rdbSourceEngine(t)
	aux := [][2]string{{"redis-ver", "7.0.15"}, {"redis-bits", "64"}, {"repl-id", strings.Repeat("ab", 20)}, {"repl-offset", "-12"}}
	libs := [][]byte{[]byte("#!lua name=one\nredis.register_function('f1', function() return 1 end)"), b("#!lua name=two\n" + strings.Repeat("-- comment\n", 30))}
	total := int64(0)
	for _, db := range src.dbs {
		total += int64(db.Len())
	}
	for _, compress := range []bool{true, false} {
		for _, window := range []int{1 << 20, 7} {
			t.Run(fmt.Sprintf("compress=%v/window=%d", compress, window), func(t *testing.T) {
				defer func(w int) { rdbLoadWindow = w }(rdbLoadWindow)
				rdbLoadWindow = window
				file, wres := writeRDB(t, src, RDBWriteOptions{Aux: aux, Functions: libs, Compress: compress})
				if wres.Keys != total || wres.SkippedNative != 0 {
					t.Fatalf("wrote %+v, want %d keys", wres, total)
				}
				if !bytes.HasPrefix(file, b("REDIS0010")) {
					t.Fatalf("header %q", file[:9])
				}
				var got [][]byte
				// iotest.HalfReader returns short reads, as a socket would.
				dst, res, err := loadRDB(t, nil, iotest.HalfReader(bytes.NewReader(file)), RDBLoadOptions{
					Function: func(code []byte) error { got = append(got, slices.Clone(code)); return nil },
				})
				if err != nil {
					t.Fatal(err)
				}
				if res.Keys != total || res.Expired != 0 || res.Version != 10 {
					t.Fatalf("loaded %+v, want %d keys", res, total)
				}
				for _, a := range aux {
					if res.Aux[a[0]] != a[1] {
						t.Errorf("aux %s = %q, want %q", a[0], res.Aux[a[0]], a[1])
					}
				}
				if !slices.EqualFunc(got, libs, bytes.Equal) {
					t.Errorf("libraries %q", got)
				}
				sameKeyspace(t, src, dst, nil)
				// Each native family works after the load.
				if n, _ := dst.DB(15).QueueLen(b("q15")); n != 1 {
					t.Errorf("queue length %d after the load", n)
				}
			})
		}
	}
}

// TestRDBFileCompression: with Compress the big strings are LZF-compressed
// (the file is smaller, and holds the LZF marker), without it they are
// verbatim; short strings never are.
func TestRDBFileCompression(t *testing.T) {
	src := rdbSourceEngine(t)
	on, _ := writeRDB(t, src, RDBWriteOptions{Compress: true})
	off, _ := writeRDB(t, src, RDBWriteOptions{})
	if len(on) >= len(off)-10000 {
		t.Fatalf("compressed file %d bytes, plain %d", len(on), len(off))
	}
	if !bytes.Contains(off, bytes.Repeat(b("compress me "), 1000)) {
		t.Error("the plain file does not hold the big string verbatim")
	}
	if bytes.Contains(on, bytes.Repeat(b("compress me "), 20)) {
		t.Error("the compressed file holds the big string verbatim")
	}
	if !bytes.Contains(off, b("\x09inline-25\x1a"+strings.Repeat("ab", 13))) || !bytes.Contains(on, b("\x09inline-25\xc3")) {
		t.Error("a 26-byte string kept in its record: not verbatim without Compress, or not compressed with it")
	}
}

// TestRDBFileKeysAreStoredAndRecorded: loaded keys replace those there,
// raise no keyspace event, and reach persistence: a restart from the
// change records has them all, deadlines included.
func TestRDBFileKeysAreStoredAndRecorded(t *testing.T) {
	src := rdbSourceEngine(t)
	file, _ := writeRDB(t, src, RDBWriteOptions{Compress: true})
	dst, clock, events := newTestEngine(t)
	rec := &listRecorder{}
	dst.SetSink(rec)
	dst.Lock()
	dst.DB(0).SetString(b("s7"), b("old"), SetOptions{ExpireAt: rdbTestNow + 999})
	dst.DB(0).ListPush(b("hset"), [][]byte{b("old list")}, false, false)
	dst.DB(0).SetString(b("only-here"), b("stays"), SetOptions{})
	events.take()
	res, err := dst.LoadRDB(bytes.NewReader(file), RDBLoadOptions{})
	if err != nil {
		dst.Unlock()
		t.Fatal(err)
	}
	if ev := events.take(); ev != "" {
		t.Errorf("keyspace events on load: %.200s", ev)
	}
	if v, _ := mustGet(t, dst.DB(0), "only-here"); v != "stays" {
		t.Error("a key the file does not hold went away")
	}
	dst.DB(0).Delete(b("only-here"))
	sameKeyspace(t, src, dst, nil)
	if res.Keys == 0 {
		t.Fatal("nothing loaded")
	}
	dst.Unlock()
	store := listStore{}
	store.apply(rec.take())
	restarted := store.loadInto(t, New(Options{Clock: clock}))
	restarted.Lock()
	defer restarted.Unlock()
	restarted.FinishLoad()
	sameKeyspace(t, src, restarted, nil)
}

func TestRDBFileExpiredKeys(t *testing.T) {
	src := rdbSourceEngine(t)
	// "hht" and "k3" are past their deadline, still stored: Redis writes
	// them with it.
	later := int64(rdbTestNow + 10_000)
	src.clock.(*ManualClock).Set(time.UnixMilli(later))
	src.Refresh()
	file, wres := writeRDB(t, src, RDBWriteOptions{})
	dst, res, err := loadRDBAt(t, later, file, nil, RDBLoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Expired != 2 || res.Keys != wres.Keys-2 {
		t.Fatalf("loaded %d keys, skipped %d expired; wrote %d", res.Keys, res.Expired, wres.Keys)
	}
	if dst.DB(0).keys.recs.Get(b("hht")) != nil || dst.DB(3).keys.recs.Get(b("k3")) != nil {
		t.Fatal("an expired key was loaded")
	}
	kept, res, err := loadRDBAt(t, later, file, nil, RDBLoadOptions{KeepExpired: true})
	if err != nil || res.Expired != 0 || res.Keys != wres.Keys {
		t.Fatalf("KeepExpired: %+v, %v", res, err)
	}
	if r := kept.DB(3).keys.recs.Get(b("k3")); r == nil || r.Expire() != rdbTestNow+5000 {
		t.Fatal("KeepExpired lost an expired key or its deadline")
	}
}

// TestRDBFileAccessInfo: under an LFU policy each key carries its counter
// (FREQ), under an LRU one its idle time (IDLE), and a loader under the
// same policy takes them.
func TestRDBFileAccessInfo(t *testing.T) {
	for _, policy := range []EvictionPolicy{PolicyAllKeysLFU, PolicyVolatileLRU} {
		src := New(Options{Clock: NewManualClock(time.UnixMilli(rdbTestNow))})
		src.Lock()
		cfg := DefaultEvictionConfig()
		cfg.Policy = policy
		src.SetEvictionConfig(cfg)
		src.DB(0).SetString(b("k"), b("v"), SetOptions{})
		src.DB(0).keys.recs.Get(b("k")).SetClock(src.lfuMinutes()<<8 | 77)
		if !policy.LFU() {
			src.DB(0).keys.recs.Get(b("k")).SetClock(src.lruClock() - 500)
		}
		file, _ := writeRDB(t, src, RDBWriteOptions{})
		src.Unlock()
		op := []byte{rdbOpFreq, 77}
		if !policy.LFU() {
			op = []byte{rdbOpIdle, 0x41, 0xF4} // 500 as a 14-bit length
		}
		if !bytes.Contains(file, append(op, rdbTypeString, 1, 'k')) {
			t.Fatalf("%v: no access opcode before the key: %q", policy, file)
		}
		dst := New(Options{Clock: NewManualClock(time.UnixMilli(rdbTestNow))})
		dst.Lock()
		dst.SetEvictionConfig(cfg)
		if _, err := dst.LoadRDB(bytes.NewReader(file), RDBLoadOptions{}); err != nil {
			t.Fatal(err)
		}
		obj := dst.DB(0).Peek(b("k"))
		if policy.LFU() {
			if f := dst.DB(0).AccessFrequency(obj); f != 77 {
				t.Errorf("counter %d after the load, want 77", f)
			}
		} else if idle := dst.DB(0).IdleTime(obj); idle != 500 {
			t.Errorf("idle %d s after the load, want 500", idle)
		}
		dst.Unlock()
	}
}

// craftRDB builds a file: the header of version, body's entries, EOF and
// (from version 5) the checksum.
func craftRDB(version int, body func(w *rdbWriter)) []byte {
	w := &rdbWriter{}
	w.b = fmt.Appendf(nil, "REDIS%04d", version)
	body(w)
	w.b = append(w.b, rdbOpEOF)
	if version >= 5 {
		w.b = binary.LittleEndian.AppendUint64(w.b, rdbCRC64(w.b))
	}
	return w.b
}

func TestRDBFileOldFormats(t *testing.T) {
	// Version 4: no checksum, seconds deadlines, a zipmap hash, a ziplist
	// list, an old-style sorted set with string scores.
	file := craftRDB(4, func(w *rdbWriter) {
		w.b = append(w.b, rdbOpSelectDB, 2)
		w.b = append(w.b, rdbOpExpire)
		w.b = binary.LittleEndian.AppendUint32(w.b, uint32(rdbTestNow/1000+100))
		w.b = append(w.b, rdbTypeString)
		w.str(b("old"))
		w.str(b("value"))
		w.b = append(w.b, rdbTypeHashZipmap)
		w.str(b("zm"))
		w.str([]byte{1, 1, 'f', 1, 0, 'v', 0xFF})
		w.b = append(w.b, rdbTypeZSet)
		w.str(b("z"))
		w.length(1)
		w.str(b("m"))
		w.b = append(w.b, 3, '1', '.', '5')
		// An empty list, as a Redis bug could write: skipped.
		w.b = append(w.b, rdbTypeList)
		w.str(b("empty"))
		w.length(0)
	})
	e, res, err := loadRDB(t, file, nil, RDBLoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Version != 4 || res.Keys != 3 {
		t.Fatalf("%+v", res)
	}
	db := e.DB(2)
	if r := db.keys.recs.Get(b("old")); r == nil || r.Expire() != rdbTestNow/1000*1000+100_000 {
		t.Fatal("the key with a seconds deadline")
	}
	if v := logicalValue(db.Peek(b("zm"))); v != "hash/listpack\nlen 1\n\"f\"=\"v\"\n" {
		t.Errorf("zipmap hash: %q", v)
	}
	if v := logicalValue(db.Peek(b("z"))); v != "zset/listpack\nlen 1\n\"m\" 1.5\n" {
		t.Errorf("old zset: %q", v)
	}
	if db.Exists(b("empty")) {
		t.Error("an empty list was loaded")
	}
}

func TestRDBFileErrors(t *testing.T) {
	valid := craftRDB(10, func(w *rdbWriter) {
		w.b = append(w.b, rdbTypeString)
		w.str(b("k"))
		w.str(b("v"))
	})
	withSum := func(f []byte, sum uint64) []byte {
		f = slices.Clone(f)
		binary.LittleEndian.PutUint64(f[len(f)-8:], sum)
		return f
	}
	for _, c := range []struct {
		name string
		file []byte
		want string
	}{
		{"empty", nil, "Unexpected EOF"},
		{"signature", append(b("RADIS"), valid[5:]...), "Wrong signature trying to load DB from file"},
		{"version 11", append(b("REDIS0011"), valid[9:]...), "Can't handle RDB format version 11"},
		{"version 0", append(b("REDIS0000"), valid[9:]...), "Can't handle RDB format version 0"},
		{"checksum", withSum(valid, 12345), "RDB CRC error"},
		{"no checksum", valid[:len(valid)-3], "Unexpected EOF"},
		{"no EOF", valid[:len(valid)-9], "Unexpected EOF"},
		{"db 16", craftRDB(10, func(w *rdbWriter) { w.b = append(w.b, rdbOpSelectDB, 16) }),
			"more than 16 databases"},
		{"old functions", craftRDB(10, func(w *rdbWriter) { w.b = append(w.b, rdbOpFunction, 1, 'x') }), "release candidates"},
		{"module aux", craftRDB(10, func(w *rdbWriter) { w.b = append(w.b, rdbOpModuleAux, 1, 2, 2) }), "AUX module data"},
		{"unknown type", craftRDB(10, func(w *rdbWriter) { w.b = append(w.b, 30, 1, 'k') }), "Unknown RDB value type 30"},
		{"unknown module", craftRDB(10, func(w *rdbWriter) {
			w.b = append(w.b, rdbTypeModule2, 1, 'k')
			w.length(moduleTypeID("otherxxxx", 1))
		}), "no matching module"},
		{"empty intset", craftRDB(10, func(w *rdbWriter) {
			w.b = append(w.b, rdbTypeSetIntset, 1, 'k')
			w.str([]byte{2, 0, 0, 0, 0, 0, 0, 0})
		}), "Bad data format"},
		{"library refused", craftRDB(10, func(w *rdbWriter) { w.b = append(w.b, rdbOpFunction2); w.str(b("bad")) }), "Failed loading library, no"},
	} {
		_, _, err := loadRDB(t, c.file, nil, RDBLoadOptions{Function: func([]byte) error { return errors.New("no") }})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error with %q", c.name, err, c.want)
		}
	}
	if _, _, err := loadRDB(t, withSum(valid, 0), nil, RDBLoadOptions{}); err != nil {
		t.Errorf("a zero checksum (rdbchecksum no) refused: %v", err)
	}
	if _, _, err := loadRDB(t, nil, iotest.ErrReader(io.ErrClosedPipe), RDBLoadOptions{}); !errors.Is(err, io.ErrClosedPipe) {
		t.Errorf("read error: %v", err)
	}
}

// TestRDBFileTruncatedAndCorrupt: every prefix of a file, and every file
// with one byte changed, is refused with an error (the checksum covers
// what the decoders would accept), never a panic.
func TestRDBFileTruncatedAndCorrupt(t *testing.T) {
	e := New(Options{Clock: NewManualClock(time.UnixMilli(rdbTestNow))})
	e.Lock()
	defer e.Unlock()
	db := e.DB(0)
	db.SetString(b("s"), bytes.Repeat(b("xy"), 30), SetOptions{ExpireAt: rdbTestNow + 5000})
	db.ListPush(b("l"), [][]byte{b("a"), b("1000")}, false, false)
	db.HSet(b("h"), [][]byte{b("f"), b("v")})
	db.ZAdd(b("z"), ZAddFlags{}, []float64{1.5}, [][]byte{b("m")})
	db.XAdd(b("x"), &XAddArgs{ID: StreamID{5, 1}, IDGiven: true, SeqGiven: true, Fields: [][]byte{b("f"), b("v")}})
	db.DelayAdd(b("d"), b("t"), DelayAddArgs{Due: rdbTestNow + 5000})
	file, _ := writeRDB(t, e, RDBWriteOptions{Compress: true, Aux: [][2]string{{"a", "b"}}})
	defer func(w int) { rdbLoadWindow = w }(rdbLoadWindow)
	for _, window := range []int{1 << 20, 3} {
		rdbLoadWindow = window
		for n := range len(file) {
			if _, _, err := loadRDB(t, file[:n], nil, RDBLoadOptions{}); err == nil {
				t.Fatalf("window %d: a file cut to %d of %d bytes loaded", window, n, len(file))
			}
		}
		for i := range len(file) {
			if i == 8 {
				continue // "REDIS001?" is version 1, which has no checksum: Redis loads it too
			}
			for _, x := range []byte{0x01, 0x80, 0xFF} {
				bad := slices.Clone(file)
				bad[i] ^= x
				if _, _, err := loadRDB(t, bad, nil, RDBLoadOptions{}); err == nil {
					t.Fatalf("window %d: byte %d changed (^%#x) loaded", window, i, x)
				}
			}
		}
	}
}

// TestRDBFileSkipNative: SkipNative leaves Revolver's own types out and
// counts them; the file holds only what redis-server can load.
func TestRDBFileSkipNative(t *testing.T) {
	src := rdbSourceEngine(t)
	file, res := writeRDB(t, src, RDBWriteOptions{SkipNative: true})
	native := func(t Type) bool { return !redisType(t) }
	var wantNative int64
	for _, db := range src.dbs {
		db.keys.recs.ForEach(func(r flat.Record) bool {
			if native(recType(r)) {
				wantNative++
			}
			return true
		})
	}
	if wantNative != 6 || res.SkippedNative != wantNative {
		t.Fatalf("skipped %d native keys, want %d", res.SkippedNative, wantNative)
	}
	dst, lres, err := loadRDB(t, file, nil, RDBLoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if lres.Keys != res.Keys {
		t.Fatalf("loaded %d, wrote %d", lres.Keys, res.Keys)
	}
	sameKeyspace(t, src, dst, native)
}

// FuzzLoadRDB: no input panics or hangs the loader; a file it accepts
// writes and loads again to the same keyspace. The seeds are valid files,
// some with a zero checksum, which the loader does not check, so that
// mutations get past it.
func FuzzLoadRDB(f *testing.F) {
	// Small files: the mutations land in every kind of entry.
	small := New(Options{Clock: NewManualClock(time.UnixMilli(rdbTestNow))})
	small.Lock()
	db := small.DB(0)
	db.SetString(b("s"), b("hello"), SetOptions{ExpireAt: rdbTestNow + 5000})
	db.SetString(b("lzf"), bytes.Repeat(b("ab"), 20), SetOptions{})
	small.DB(1).ListPush(b("l"), [][]byte{b("a"), b("1000")}, false, false)
	db.SAdd(b("is"), [][]byte{b("1"), b("2")})
	db.SAdd(b("hs"), [][]byte{b("a"), b("b")})
	db.HSet(b("h"), [][]byte{b("f"), b("v")})
	db.ZAdd(b("z"), ZAddFlags{}, []float64{1.5, 2}, [][]byte{b("m"), b("n")})
	db.PFAdd(b("hll"), [][]byte{b("x")})
	db.DelayAdd(b("d"), b("t"), DelayAddArgs{Due: rdbTestNow + 5000})
	db.QueuePush(b("q"), b("job"), QueuePushArgs{})
	db.XAdd(b("x"), &XAddArgs{ID: StreamID{5, 1}, IDGiven: true, SeqGiven: true, Fields: [][]byte{b("f"), b("v")}})
	s, _ := db.ReadStream(b("x"))
	db.XGroupCreate(b("x"), s, b("g"), &StreamID{}, 0)
	db.XReadGroupNew(b("x"), s, s.Group(b("g")), b("c"), 1, false)
	for _, compress := range []bool{true, false} {
		file, _ := writeRDB(f, small, RDBWriteOptions{Compress: compress, Aux: [][2]string{{"redis-ver", "7.0.15"}}})
		f.Add(file)
		zero := slices.Clone(file)
		binary.LittleEndian.PutUint64(zero[len(zero)-8:], 0)
		f.Add(zero)
	}
	small.Unlock()
	f.Add(craftRDB(3, func(w *rdbWriter) { w.b = append(w.b, rdbTypeString, 1, 'k', 1, 'v') }))
	f.Fuzz(func(t *testing.T, file []byte) {
		e, res, err := loadRDB(t, file, nil, RDBLoadOptions{KeepExpired: true})
		// Read a few bytes at a time, the file loads the same.
		defer func(w int) { rdbLoadWindow = w }(rdbLoadWindow)
		rdbLoadWindow = 5
		small, resSmall, errSmall := loadRDB(t, nil, iotest.OneByteReader(bytes.NewReader(file)), RDBLoadOptions{KeepExpired: true})
		if (err == nil) != (errSmall == nil) || res.Keys != resSmall.Keys {
			t.Fatalf("loaded whole: %d keys, %v; a few bytes at a time: %d keys, %v", res.Keys, err, resSmall.Keys, errSmall)
		}
		if err != nil {
			return
		}
		sameKeyspace(t, e, small, nil)
		var buf bytes.Buffer
		if _, err := e.WriteRDB(&buf, RDBWriteOptions{}); err != nil {
			t.Fatal(err)
		}
		again, res2, err := loadRDB(t, buf.Bytes(), nil, RDBLoadOptions{KeepExpired: true})
		if err != nil {
			t.Fatalf("a loaded file written again does not load: %v", err)
		}
		if res2.Keys > res.Keys {
			t.Fatalf("%d keys loaded, %d after writing them", res.Keys, res2.Keys)
		}
		sameKeyspace(t, e, again, nil)
	})
}
