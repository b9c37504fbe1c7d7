package engine

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

func TestMurmurHash64A(t *testing.T) {
	if h := murmurHash64A([]byte("a"), hllSeed); h != 0x53d2470a9b43b1a7 {
		t.Fatalf("hash of a = %#x", h)
	}
	for _, c := range []struct {
		elem  string
		index int
		count uint8
	}{{"a", 12711, 2}, {"b", 15780, 1}, {"c", 8436, 1}} {
		if i, n := hllPatLen([]byte(c.elem)); i != c.index || n != c.count {
			t.Errorf("%s: register %d count %d, want %d %d", c.elem, i, n, c.index, c.count)
		}
	}
	// Every tail length goes through the fall-through; none may panic and
	// all must differ.
	seen := map[uint64]bool{}
	for n := 0; n <= 17; n++ {
		seen[murmurHash64A(bytes.Repeat([]byte{'x'}, n), hllSeed)] = true
	}
	if len(seen) != 18 {
		t.Fatalf("tail lengths collide: %d distinct hashes", len(seen))
	}
}

func newHLLEngine(t testing.TB) (*Engine, *DB) {
	e := New(Options{})
	e.Lock()
	t.Cleanup(e.Unlock)
	return e, e.DB(0)
}

func pfadd(t testing.TB, db *DB, key string, elems ...string) bool {
	t.Helper()
	args := make([][]byte, len(elems))
	for i, e := range elems {
		args[i] = []byte(e)
	}
	changed, err := db.PFAdd([]byte(key), args)
	if err != nil {
		t.Fatal(err)
	}
	return changed
}

func pfcount(t testing.TB, db *DB, keys ...string) int64 {
	t.Helper()
	args := make([][]byte, len(keys))
	for i, k := range keys {
		args[i] = []byte(k)
	}
	n, err := db.PFCount(args)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func rawValue(t testing.TB, db *DB, key string) []byte {
	t.Helper()
	v, ok, err := db.Get([]byte(key))
	if err != nil || !ok {
		t.Fatalf("GET %s: %v %v", key, ok, err)
	}
	return v
}

func TestPFAddSparseBytes(t *testing.T) {
	_, db := newHLLEngine(t)
	if !pfadd(t, db, "h", "a", "b", "c") {
		t.Fatal("PFADD h a b c replied 0")
	}
	want := "48594c4c01000000000000000000008060f38050b1844bfb80425a"
	if got := hex.EncodeToString(rawValue(t, db, "h")); got != want {
		t.Fatalf("PFADD h a b c:\n got  %s\n want %s", got, want)
	}
	if pfadd(t, db, "h", "a", "b") {
		t.Fatal("re-adding changed the sketch")
	}
	if !pfadd(t, db, "empty") || hex.EncodeToString(rawValue(t, db, "empty")) != "48594c4c0100000000000000000000807fff" {
		t.Fatalf("PFADD of no element: %x", rawValue(t, db, "empty"))
	}
	if pfcount(t, db, "h") != 3 || pfcount(t, db, "empty") != 0 || pfcount(t, db, "nosuch") != 0 {
		t.Fatal("counts of h, empty, nosuch")
	}
	if got := hex.EncodeToString(rawValue(t, db, "h")[8:16]); got != "0300000000000000" {
		t.Fatalf("PFCOUNT did not cache: %s", got)
	}
}

// addUsers adds "user:from".."user:to" in batches of 100, as a client
// would.
func addUsers(t testing.TB, db *DB, key string, from, to int) {
	batch := make([][]byte, 0, 100)
	for i := from; i <= to; i++ {
		batch = append(batch, []byte("user:"+strconv.Itoa(i)))
		if len(batch) == cap(batch) || i == to {
			if _, err := db.PFAdd([]byte(key), batch); err != nil {
				t.Fatal(err)
			}
			batch = batch[:0]
		}
	}
}

func TestPFCountGolden(t *testing.T) {
	golden := []struct {
		n    int
		want int64
	}{{500, 499}, {1000, 1007}, {2000, 2008}, {10000, 10089}, {100000, 99471}, {1000000, 999674}}
	_, db := newHLLEngine(t)
	prev := 0
	for _, g := range golden {
		if g.n == 1000000 && testing.Short() {
			t.Skip("1M elements skipped in -short")
		}
		addUsers(t, db, "users", prev+1, g.n)
		prev = g.n
		if got := pfcount(t, db, "users"); got != g.want {
			t.Errorf("user:1..user:%d: PFCOUNT %d, want %d", g.n, got, g.want)
		}
		// The same elements in one call to a fresh key, and through a
		// multi-key count, give the same number.
		fresh := "fresh" + strconv.Itoa(g.n)
		addUsers(t, db, fresh, 1, g.n)
		if got := pfcount(t, db, fresh, "nosuch"); got != g.want {
			t.Errorf("user:1..user:%d: multi-key PFCOUNT %d, want %d", g.n, got, g.want)
		}
		v := rawValue(t, db, "users")
		switch g.n {
		case 1000:
			if v[4] != hllEncSparse || len(v) != 1911 {
				t.Errorf("1000 elements: encoding %d, %d bytes; want sparse, 1911", v[4], len(v))
			}
		case 2000:
			if v[4] != hllEncDense || len(v) != hllDenseLen {
				t.Errorf("2000 elements: encoding %d, %d bytes; want dense", v[4], len(v))
			}
		}
	}
}

// TestSparseDenseEquivalence adds the same random elements to a sparse
// sketch (allowed to grow large) and a dense one and checks that they hold
// the same registers and estimate the same, and that converting the sparse
// one gives the dense one's bytes.
func TestSparseDenseEquivalence(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	sparse, dense := newSparseHLL(), newDenseHLL()
	elem := make([]byte, 12)
	for n := 1; n <= 20000; n++ {
		for i := range elem {
			elem[i] = byte(rng.Uint32())
		}
		var rs, rd int
		sparse, rs = hllAdd(sparse, elem, 1<<30)
		dense, rd = hllAdd(dense, elem, 1<<30)
		if rs != rd {
			t.Fatalf("element %d: sparse says %d, dense %d", n, rs, rd)
		}
		if n%997 != 0 && n != 20000 {
			continue
		}
		cs, ok := hllCount(sparse)
		cd, _ := hllCount(dense)
		if !ok || cs != cd {
			t.Fatalf("after %d: sparse count %d (ok %v), dense %d", n, cs, ok, cd)
		}
		var ms, md hllRegs
		if !hllMerge(&ms, sparse) || !hllMerge(&md, dense) || ms != md {
			t.Fatalf("after %d: registers differ", n)
		}
	}
	if sparse[4] != hllEncSparse {
		// Values above 32 are rare enough at 20k elements; if one came up
		// the sketch is dense already and the comparison below still holds.
		t.Log("sparse sketch was promoted by a register above 32")
	}
	d, ok := sparseToDense(sparse)
	if sparse[4] == hllEncDense {
		d, ok = sparse, true
	}
	if !ok || !bytes.Equal(d[hllHeaderLen:], dense[hllHeaderLen:]) {
		t.Fatal("sparse converted to dense differs from dense")
	}
}

func TestDenseRegisters(t *testing.T) {
	regs := make([]byte, hllDenseLen-hllHeaderLen)
	var want hllRegs
	rng := rand.New(rand.NewPCG(1, 1))
	for round := 0; round < 3; round++ {
		for i := range want {
			want[i] = uint8(rng.IntN(64))
			denseSet(regs, i, want[i])
		}
		var got hllRegs
		denseMergeMax(regs, &got)
		if got != want {
			t.Fatal("unpacked registers differ from written ones")
		}
		for i, v := range want {
			if denseGet(regs, i) != v {
				t.Fatalf("register %d", i)
			}
		}
		packed := make([]byte, len(regs))
		densePack(packed, &want)
		if !bytes.Equal(packed, regs) {
			t.Fatal("densePack differs from denseSet")
		}
		var h0, h1, h2 hllHisto
		for _, v := range want {
			h0[v]++
		}
		denseHisto(regs, &h1)
		rawHisto(&want, &h2)
		if h1 != h0 || h2 != h0 {
			t.Fatal("dense or raw histogram differs from the registers' values")
		}
	}
}

func TestHLLCache(t *testing.T) {
	_, db := newHLLEngine(t)
	pfadd(t, db, "h", "x", "y")
	if pfcount(t, db, "h") != 2 {
		t.Fatal("count")
	}
	cached := bytes.Clone(rawValue(t, db, "h"))
	if pfadd(t, db, "h", "x") {
		t.Fatal("no-op PFADD changed")
	}
	if !bytes.Equal(cached, rawValue(t, db, "h")) {
		t.Fatal("no-op PFADD touched the bytes")
	}
	pfadd(t, db, "h", "z")
	v := rawValue(t, db, "h")
	// Invalidation sets only the top bit: the stale count stays.
	if v[8] != 2 || v[15] != 0x80 {
		t.Fatalf("invalidated header %x", v[:16])
	}
	// A valid cache is believed even when it is wrong, as in Redis.
	lie := []byte("HYLL\x01\x00\x00\x00\x2a\x00\x00\x00\x00\x00\x00\x00\x7f\xff")
	db.SetString([]byte("lie"), lie, SetOptions{})
	if pfcount(t, db, "lie") != 42 {
		t.Fatal("cached cardinality not used")
	}
}

func TestPFMerge(t *testing.T) {
	_, db := newHLLEngine(t)
	addUsers(t, db, "a", 1, 300)
	addUsers(t, db, "b", 200, 600)
	addUsers(t, db, "big", 1, 5000)
	addUsers(t, db, "all", 1, 600)
	if err := db.PFMerge([][]byte{[]byte("m"), []byte("a"), []byte("b"), []byte("nosuch")}); err != nil {
		t.Fatal(err)
	}
	if pfcount(t, db, "m") != pfcount(t, db, "all") || pfcount(t, db, "a", "b") != pfcount(t, db, "all") {
		t.Fatal("union counts differ")
	}
	if v := rawValue(t, db, "m"); v[4] != hllEncSparse {
		t.Fatal("merge of sparse sketches is dense")
	}
	if err := db.PFMerge([][]byte{[]byte("a"), []byte("big")}); err != nil {
		t.Fatal(err)
	}
	if v := rawValue(t, db, "a"); v[4] != hllEncDense || pfcount(t, db, "a") != pfcount(t, db, "big") {
		t.Fatal("merge into a with a dense input")
	}
	var regs hllRegs
	hllMerge(&regs, rawValue(t, db, "big"))
	var got hllRegs
	hllMerge(&got, rawValue(t, db, "a"))
	if got != regs {
		t.Fatal("a's registers are not big's after the merge")
	}
}

// TestHLLCorruption covers the values Redis rejects and the corrupt sparse
// values it detects while decoding.
func TestHLLCorruption(t *testing.T) {
	_, db := newHLLEngine(t)
	set := func(key string, v []byte) {
		db.SetString([]byte(key), v, SetOptions{})
	}
	hdr := func(enc byte, stale bool) []byte {
		h := []byte("HYLL\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00")
		h[4] = enc
		if stale {
			h[15] = 0x80
		}
		return h
	}
	set("short", []byte("HYLL"))
	set("magic", append([]byte("HYLX"), hdr(1, true)[4:]...))
	set("enc", hdr(2, true))
	set("denselen", append(hdr(0, true), 1, 2, 3))
	set("str", []byte("hello world, not a sketch"))
	db.SAdd([]byte("set"), [][]byte{[]byte("x")})
	for _, k := range []string{"short", "magic", "enc", "denselen", "str"} {
		if _, err := db.PFAdd([]byte(k), [][]byte{[]byte("a")}); err != ErrNotHLL {
			t.Errorf("PFADD %s: %v", k, err)
		}
		if _, err := db.PFCount([][]byte{[]byte(k), []byte("x")}); err != ErrNotHLL {
			t.Errorf("PFCOUNT %s x: %v", k, err)
		}
	}
	if _, err := db.PFAdd([]byte("set"), nil); err != ErrWrongType {
		t.Errorf("PFADD set: %v", err)
	}
	// Opcodes covering too few or too many registers.
	set("few", append(hdr(1, true), 0x7f, 0xfe))
	set("many", append(hdr(1, true), 0x7f, 0xff, 0x00))
	set("noops", hdr(1, true))
	for _, k := range []string{"few", "many", "noops"} {
		if _, err := db.PFCount([][]byte{[]byte(k)}); err != ErrHLLCorrupt {
			t.Errorf("PFCOUNT %s: %v", k, err)
		}
		if err := db.PFMerge([][]byte{[]byte("dst"), []byte(k)}); err != ErrHLLCorrupt {
			t.Errorf("PFMERGE dst %s: %v", k, err)
		}
	}
	if _, err := db.PFAdd([]byte("noops"), [][]byte{[]byte("a")}); err != ErrHLLCorrupt {
		t.Errorf("PFADD noops: %v", err)
	}
	// A VAL past the last register is corrupt even after a complete cover
	// (the installed Redis 7.0.15 carries the CVE-2025-32023 fix).
	set("tail", append(hdr(1, true), 0x7f, 0xff, 0x80))
	if _, err := db.PFCount([][]byte{[]byte("tail"), []byte("x")}); err != ErrHLLCorrupt {
		t.Errorf("multi-key PFCOUNT tail: %v", err)
	}
	if _, err := db.PFCount([][]byte{[]byte("tail")}); err != ErrHLLCorrupt {
		t.Errorf("PFCOUNT tail: %v", err)
	}
}

// TestHLLNoPanics throws random sparse opcodes (and truncated ones) at
// every operation: errors are fine, panics are not.
func TestHLLNoPanics(t *testing.T) {
	_, db := newHLLEngine(t)
	rng := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 3000; i++ {
		n := rng.IntN(40)
		v := []byte("HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80")
		for j := 0; j < n; j++ {
			v = append(v, byte(rng.Uint32()))
		}
		db.SetString([]byte("k"), v, SetOptions{})
		db.SetString([]byte("k2"), v, SetOptions{})
		elems := [][]byte{[]byte(strconv.Itoa(i)), []byte("a"), []byte("b")}
		db.PFAdd([]byte("k"), elems)
		db.PFCount([][]byte{[]byte("k")})
		db.PFCount([][]byte{[]byte("k2"), []byte("k")})
		db.PFMerge([][]byte{[]byte("k2"), []byte("k")})
		if s, err := db.PFDebugKey([]byte("k2")); err == nil && s != nil {
			HLLDecode(s)
			db.PFDebugRegisters([]byte("k2"), s)
		}
	}
}

func TestPFAddSparseMaxBytes(t *testing.T) {
	e, db := newHLLEngine(t)
	lim := DefaultLimits()
	lim.HLLSparseMaxBytes = 100
	e.SetLimits(lim)
	for i := 1; ; i++ {
		addUsers(t, db, "h", i, i)
		v := rawValue(t, db, "h")
		if v[4] == hllEncDense {
			break
		}
		if len(v) > 100 || i > 100 {
			t.Fatalf("%d elements with hll-sparse-max-bytes 100: sparse, %d bytes", i, len(v))
		}
	}
	lim.HLLSparseMaxBytes = 0
	e.SetLimits(lim)
	pfadd(t, db, "z")
	if v := rawValue(t, db, "z"); v[4] != hllEncSparse {
		t.Fatal("a new sketch is sparse whatever the limit")
	}
	pfadd(t, db, "z", "a")
	if v := rawValue(t, db, "z"); v[4] != hllEncDense {
		t.Fatal("limit 0: the first growth promotes")
	}
}

func TestPFDebug(t *testing.T) {
	_, db := newHLLEngine(t)
	pfadd(t, db, "h", "a", "b", "c")
	s, err := db.PFDebugKey([]byte("h"))
	if err != nil || s == nil {
		t.Fatal(err)
	}
	if txt, ok := HLLDecode(s); !ok || txt != "Z:8436 v:1,1 Z:4274 v:2,1 Z:3068 v:1,1 Z:603" {
		t.Fatalf("DECODE: %q", txt)
	}
	if HLLEncoding(s) != "sparse" {
		t.Fatal("encoding")
	}
	regs, err := db.PFDebugRegisters([]byte("h"), s)
	if err != nil || regs[12711] != 2 || regs[15780] != 1 || regs[8436] != 1 || HLLEncoding(s) != "dense" {
		t.Fatal("GETREG")
	}
	if conv, _ := db.PFDebugToDense([]byte("h"), s); conv {
		t.Fatal("TODENSE of a dense sketch")
	}
	if _, ok := HLLDecode(s); ok {
		t.Fatal("DECODE of a dense sketch")
	}
	if s, err := db.PFDebugKey([]byte("nosuch")); s != nil || err != nil {
		t.Fatal("missing key")
	}
}

func TestHLLSelfTest(t *testing.T) {
	if testing.Short() {
		t.Skip("ten million additions")
	}
	e := New(Options{})
	if err := e.HLLSelfTest(); err != nil {
		t.Fatal(err)
	}
}

// TestHLLPersistence checks which records the HyperLogLog commands write
// and that replaying them gives the engine's bytes: whole values for a new
// or sparse sketch, patches for a few raised registers of a dense one and
// for PFCOUNT's cached count.
func TestHLLPersistence(t *testing.T) {
	e, db := newHLLEngine(t)
	sink := newHSRecordSink()
	e.SetSink(sink)
	step := func(what, want string) {
		t.Helper()
		e.FlushChanges() // whole values are held back for coalescing
		if got := sink.take(); got != want {
			t.Fatalf("%s wrote %s, want %s", what, got, want)
		}
		if !bytes.Equal(sink.keys[hsSinkKey{0, "h"}].payload, rawValue(t, db, "h")) {
			t.Fatalf("after %s the persisted bytes differ from the engine's", what)
		}
	}
	pfadd(t, db, "h", "a", "b")
	step("PFADD on a new key", "[value=1]")
	pfadd(t, db, "h", "a")
	pfcount(t, db, "h")
	pfcount(t, db, "h")
	step("a no-op PFADD and two PFCOUNTs", "[patch=1]")

	elems := benchElems(3000)
	if _, err := db.PFAdd([]byte("h"), elems); err != nil {
		t.Fatal(err)
	}
	step("PFADD turning the sketch dense", "[value=1]")
	pfcount(t, db, "h")
	step("PFCOUNT of a dense sketch", "[patch=1]")
	for i := 0; ; i++ {
		if pfadd(t, db, "h", fmt.Sprint("new:", i)) {
			break
		}
	}
	// The cached count went stale (one header byte) and one register
	// changed (its one or two bytes).
	step("PFADD raising one register", "[patch=2]")
	if _, err := db.PFAdd([]byte("h"), benchElems(100000)[3000:]); err != nil {
		t.Fatal(err)
	}
	step("PFADD raising many registers", "[value=1]")

	err := db.PFMerge([][]byte{[]byte("h"), []byte("nosuch")})
	if err != nil {
		t.Fatal(err)
	}
	step("PFMERGE", "[value=1]")
}

func benchElems(n int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		out[i] = []byte("element:" + strconv.Itoa(i))
	}
	return out
}

// BenchmarkPFAddSparse adds one new element per call to a sketch that
// stays sparse (about 1,000 elements, then a fresh key).
func BenchmarkPFAddSparse(b *testing.B) {
	_, db := newHLLEngine(b)
	elems := benchElems(1000)
	key := []byte("h")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if i%len(elems) == 0 {
			db.Delete(key)
		}
		db.PFAdd(key, elems[i%len(elems):i%len(elems)+1])
	}
}

// BenchmarkPFAddDense adds one element per call to a dense sketch.
func BenchmarkPFAddDense(b *testing.B) {
	_, db := newHLLEngine(b)
	key := []byte("h")
	addUsers(b, db, "h", 1, 5000)
	elems := benchElems(1 << 16)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		db.PFAdd(key, elems[i&(1<<16-1):i&(1<<16-1)+1])
	}
}

// BenchmarkPFAdd100Dense adds 100 elements per call to a dense sketch.
func BenchmarkPFAdd100Dense(b *testing.B) {
	_, db := newHLLEngine(b)
	key := []byte("h")
	addUsers(b, db, "h", 1, 5000)
	elems := benchElems(1 << 16)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		j := (i * 100) & (1<<16 - 1)
		if j+100 > len(elems) {
			j = 0
		}
		db.PFAdd(key, elems[j:j+100])
	}
}

// BenchmarkPFCount is a single-key count after a change (no cache).
func BenchmarkPFCount(b *testing.B) {
	_, db := newHLLEngine(b)
	addUsers(b, db, "h", 1, 100000)
	key := [][]byte{[]byte("h")}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		hllInvalidate(rawValue(b, db, "h"))
		db.PFCount(key)
	}
}

// BenchmarkPFCountCached is a single-key count answered by the cache.
func BenchmarkPFCountCached(b *testing.B) {
	_, db := newHLLEngine(b)
	addUsers(b, db, "h", 1, 100000)
	key := [][]byte{[]byte("h")}
	db.PFCount(key)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		db.PFCount(key)
	}
}

// BenchmarkPFCount10 counts the union of ten dense sketches.
func BenchmarkPFCount10(b *testing.B) {
	_, db := newHLLEngine(b)
	keys := make([][]byte, 10)
	for k := range keys {
		keys[k] = []byte("h" + strconv.Itoa(k))
		addUsers(b, db, string(keys[k]), k*10000, k*10000+5000)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		db.PFCount(keys)
	}
}

// BenchmarkPFMerge10 merges ten dense sketches into a destination.
func BenchmarkPFMerge10(b *testing.B) {
	_, db := newHLLEngine(b)
	keys := make([][]byte, 11)
	keys[0] = []byte("dest")
	for k := 1; k < len(keys); k++ {
		keys[k] = []byte("h" + strconv.Itoa(k))
		addUsers(b, db, string(keys[k]), k*10000, k*10000+5000)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		db.PFMerge(keys)
	}
}

// TestInPlaceChangesCoalesce: in-place changes to one string under one lock
// hold write one record, with the final bytes; a record of anything else
// writes the held one first, keeping execution order.
func TestInPlaceChangesCoalesce(t *testing.T) {
	e, db := newHLLEngine(t)
	sink := newHSRecordSink()
	e.SetSink(sink)
	pfadd(t, db, "h", "a")
	sink.take()
	for i := range 10 {
		pfadd(t, db, "h", "x"+strconv.Itoa(i))
	}
	if got := sink.take(); got != "[]" {
		t.Fatalf("held-back changes wrote %s before the flush", got)
	}
	e.FlushChanges()
	if got := sink.take(); got != "[value=1]" {
		t.Fatalf("ten PFADDs wrote %s", got)
	}
	if !bytes.Equal(sink.keys[hsSinkKey{0, "h"}].payload, rawValue(t, db, "h")) {
		t.Fatal("persisted bytes are not the final value")
	}
	order := &orderSink{}
	e.SetSink(order)
	pfadd(t, db, "h", "y")
	db.Delete([]byte("h"))
	if got := strings.Join(order.ops, " "); got != "put:h del:h" {
		t.Fatalf("change then DEL wrote %q", got)
	}
}

// orderSink records the order of value writes and key deletions.
type orderSink struct {
	nopSink
	ops []string
}

func (s *orderSink) PutValue(_ int, key []byte, _ Type, _ []byte) {
	s.ops = append(s.ops, "put:"+string(key))
}

func (s *orderSink) DeleteKey(_ int, key []byte, _ bool) {
	s.ops = append(s.ops, "del:"+string(key))
}
