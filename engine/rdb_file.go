package engine

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc64"
	"io"
	"time"
)

// RDB files as Redis 2.x to 7.0 write them (SAVE's dump.rdb, a master's
// full sync): "REDIS" and a 4-digit version, then opcodes and keys, then
// EOF and, from version 5, the CRC-64 of everything before it. A key is its
// value type byte, its name and its value in the encoding DUMP uses, after
// opcodes that apply to it alone (deadline, LRU idle time, LFU counter).

// RDB opcodes (rdb.h).
const (
	rdbOpFunction2 = 245
	rdbOpFunction  = 246
	rdbOpModuleAux = 247
	rdbOpIdle      = 248
	rdbOpFreq      = 249
	rdbOpAux       = 250
	rdbOpResizeDB  = 251
	rdbOpExpireMs  = 252
	rdbOpExpire    = 253
	rdbOpSelectDB  = 254
	rdbOpEOF       = 255
)

// Errors of LoadRDB, with Redis's log texts where it has one.
var (
	ErrRDBSignature = errors.New("Wrong signature trying to load DB from file")
	ErrRDBChecksum  = errors.New("RDB CRC error")
	ErrRDBShort     = errors.New("Unexpected EOF reading RDB file")
)

// rdbUnsupported is an entry the file holds that this server cannot load:
// no amount of further bytes changes that.
type rdbUnsupported struct{ msg string }

func (e *rdbUnsupported) Error() string { return e.msg }

// RDBLoadOptions tune LoadRDB.
type RDBLoadOptions struct {
	// KeepExpired loads keys whose deadline has passed (a replica loading its master's
	// file keeps them: the master will send their DEL); otherwise they are skipped, as
	// Redis skips them when a master loads.
	KeepExpired bool
	// Function receives each function library's code (RDB_OPCODE_FUNCTION2, 245). When nil,
	// a file holding libraries is loaded without them (the caller does not care).
	// code is valid during the call only; an error stops the load.
	Function func(code []byte) error
}

// RDBLoadResult is what LoadRDB found.
type RDBLoadResult struct {
	Aux     map[string]string // every AUX field (redis-ver, repl-id, repl-offset, repl-stream-db, ...)
	Keys    int64             // keys loaded
	Expired int64             // keys skipped because their deadline had passed
	Version int               // the file's RDB version
}

// LoadRDB reads a whole RDB file (versions 1 to 10, i.e. what Redis 2.x to 7.0 write) from r and
// stores every key in the database the file names (SELECTDB), replacing a key already there.
// It does not flush first (the caller does). Call it with the engine lock held. Bytes are
// read incrementally: the file is never held in memory whole (files are hundreds of MB).
//
// Reads are buffered, so r may be read past the checksum: a caller reading
// the file from a stream that goes on (a replication link) hands a reader
// that ends where the file ends. Bytes after the checksum are ignored.
//
// Keys arrive as RESTORE stores them, change records included, but without
// keyspace events, as Redis loads. A value with no elements (which old Redis
// versions could write) is skipped, as Redis skips it. On an error the keys
// already loaded stay.
func (e *Engine) LoadRDB(r io.Reader, o RDBLoadOptions) (RDBLoadResult, error) {
	res := RDBLoadResult{Aux: map[string]string{}}
	in := &rdbInput{src: r}
	var magic []byte
	if err := in.next(func(r *rdbReader) (err error) { magic, err = r.take(9); return err }); err != nil {
		return res, in.fail("header", err)
	}
	if string(magic[:5]) != "REDIS" {
		return res, ErrRDBSignature
	}
	res.Version = atoiPrefix(magic[5:])
	if res.Version < 1 || res.Version > RDBVersion {
		return res, fmt.Errorf("Can't handle RDB format version %d", res.Version)
	}
	l := rdbLoad{e: e, o: o, res: &res, db: e.dbs[0]}
	l.resetKeyState()
	for {
		var ent rdbEntry
		if err := in.next(func(r *rdbReader) (err error) {
			ent, err = readRDBEntry(r, &e.limits)
			return err
		}); err != nil {
			return res, in.fail(ent.what(), err)
		}
		if ent.op == rdbOpEOF {
			break
		}
		if err := l.apply(&ent); err != nil {
			return res, err
		}
	}
	if res.Version >= 5 {
		expected := in.crc
		var sum []byte
		if err := in.next(func(r *rdbReader) (err error) { sum, err = r.take(8); return err }); err != nil {
			return res, in.fail("checksum", err)
		}
		// A zero checksum: the writer had rdbchecksum off.
		if got := binary.LittleEndian.Uint64(sum); got != 0 && got != expected {
			return res, fmt.Errorf("%w: expected %x, file has %x", ErrRDBChecksum, expected, got)
		}
	}
	return res, nil
}

// atoiPrefix is C's atoi on the version digits: the leading digits, 0 when
// there are none.
func atoiPrefix(b []byte) int {
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			break
		}
		n = n*10 + int(c-'0')
	}
	return n
}

// rdbEntry is one opcode with its operands, or one key with its value.
type rdbEntry struct {
	op     byte
	n1, n2 uint64 // SELECTDB's index, RESIZEDB's sizes, IDLE's seconds, FREQ's counter
	at     int64  // EXPIRETIME(_MS)'s deadline in ms
	s1, s2 []byte // AUX's field and value, FUNCTION2's code, a key (views of the window)
	obj    Object // a key's value; nil when it was empty
	raw    []byte // a key's value bytes, after the type byte (a view of the window)
}

func (ent *rdbEntry) what() string {
	switch ent.op {
	case rdbOpAux:
		return "AUX field"
	case rdbOpFunction2:
		return "function library"
	case rdbOpSelectDB, rdbOpResizeDB, rdbOpExpire, rdbOpExpireMs, rdbOpIdle, rdbOpFreq:
		return fmt.Sprintf("opcode %d", ent.op)
	}
	if ent.s1 != nil {
		return fmt.Sprintf("the value of key %.64q (type %d)", ent.s1, ent.op)
	}
	return "an entry"
}

// readRDBEntry decodes the entry at the start of r. It has no effect but
// advancing r, so that a failed attempt is retried with more bytes.
func readRDBEntry(r *rdbReader, lim *Limits) (ent rdbEntry, err error) {
	b, err := r.take(1)
	if err != nil {
		return ent, err
	}
	ent.op = b[0]
	switch ent.op {
	case rdbOpEOF:
		return ent, nil
	case rdbOpSelectDB, rdbOpIdle:
		ent.n1, err = r.length()
	case rdbOpResizeDB:
		if ent.n1, err = r.length(); err == nil {
			ent.n2, err = r.length()
		}
	case rdbOpFreq:
		if b, err = r.take(1); err == nil {
			ent.n1 = uint64(b[0])
		}
	case rdbOpExpireMs:
		// Files before version 9 hold it in the writer's byte order: every
		// platform Redis builds for is little-endian.
		if b, err = r.take(8); err == nil {
			ent.at = int64(binary.LittleEndian.Uint64(b))
		}
	case rdbOpExpire:
		if b, err = r.take(4); err == nil {
			ent.at = int64(int32(binary.LittleEndian.Uint32(b))) * 1000
		}
	case rdbOpAux:
		if ent.s1, err = r.str(); err == nil {
			ent.s2, err = r.str()
		}
	case rdbOpFunction2:
		ent.s1, err = r.str()
	case rdbOpFunction:
		err = &rdbUnsupported{"the RDB file holds functions in the format of Redis 7.0's release candidates, which is not supported"}
	case rdbOpModuleAux:
		err = &rdbUnsupported{"The RDB file contains AUX module data I can't load: no modules here"}
	default:
		err = readRDBKey(r, lim, &ent)
	}
	return ent, err
}

// rdbValueType reports whether t is a value type a key may have in a file:
// Redis's, and Revolver's own (as a module value).
func rdbValueType(t byte) bool {
	switch t {
	case rdbTypeString, rdbTypeList, rdbTypeSet, rdbTypeZSet, rdbTypeHash, rdbTypeZSet2,
		rdbTypeModule2, rdbTypeHashZipmap, rdbTypeListZiplist, rdbTypeSetIntset,
		rdbTypeZSetZiplist, rdbTypeHashZiplist, rdbTypeListQuicklist, rdbTypeStreamListpacks,
		rdbTypeHashListpack, rdbTypeZSetListpack, rdbTypeQuicklist2, rdbTypeStreamListpacks2:
		return true
	}
	return false
}

func readRDBKey(r *rdbReader, lim *Limits, ent *rdbEntry) (err error) {
	if !rdbValueType(ent.op) {
		return &rdbUnsupported{fmt.Sprintf("Unknown RDB value type %d", ent.op)}
	}
	if ent.s1, err = r.str(); err != nil {
		return err
	}
	start := r.b
	ent.obj, err = r.object(ent.op, lim)
	switch {
	case errors.Is(err, errUnknownModule):
		return &rdbUnsupported{"The RDB file contains module data I can't load: no matching module"}
	case errors.Is(err, errEmptyKey):
		ent.obj, err = nil, nil
	}
	ent.raw = start[:len(start)-len(r.b)]
	return err
}

// rdbLoad is LoadRDB's state between entries.
type rdbLoad struct {
	e   *Engine
	o   RDBLoadOptions
	res *RDBLoadResult
	db  *DB
	// What the opcodes before a key set for it.
	at, idle, freq int64
	scratch        *Engine // where native values are tried first
}

func (l *rdbLoad) resetKeyState() { l.at, l.idle, l.freq = -1, -1, -1 }

// apply acts on one decoded entry; its views of the window are valid until
// the next read.
func (l *rdbLoad) apply(ent *rdbEntry) error {
	switch ent.op {
	case rdbOpSelectDB:
		if ent.n1 >= uint64(len(l.e.dbs)) {
			return fmt.Errorf("FATAL: Data file was created with a Redis server configured to handle more than %d databases", len(l.e.dbs))
		}
		l.db = l.e.dbs[ent.n1]
	case rdbOpResizeDB:
		// Sizing hints only.
	case rdbOpExpire, rdbOpExpireMs:
		l.at = ent.at
	case rdbOpIdle:
		l.idle = int64(min(ent.n1, 1<<62))
	case rdbOpFreq:
		l.freq = int64(ent.n1)
	case rdbOpAux:
		l.res.Aux[string(ent.s1)] = string(ent.s2)
	case rdbOpFunction2:
		if l.o.Function != nil {
			if err := l.o.Function(ent.s1); err != nil {
				return fmt.Errorf("Failed loading library, %w", err)
			}
		}
	default:
		err := l.key(ent)
		l.resetKeyState()
		return err
	}
	return nil
}

// key stores a decoded key, or counts it skipped. Like Redis's master, a
// deadline strictly before now skips the key.
func (l *rdbLoad) key(ent *rdbEntry) error {
	if ent.obj == nil {
		return nil
	}
	at := l.at
	if at != -1 && at < l.e.now && !l.o.KeepExpired {
		l.res.Expired++
		return nil
	}
	switch {
	case at == -1:
		at = 0
	case at <= 0:
		at = 1 // long past, and 0 would mean no deadline
	}
	if _, native := ent.obj.(keyBound); native && !l.tryNative(ent) {
		return fmt.Errorf("Bad data format: the value of key %.64q breaks its type's invariants", ent.s1)
	}
	db := l.db
	old, _ := db.keys.recs.Find(ent.s1)
	db.store(ent.s1, old, ent.obj, at)
	db.e.setAccess(ent.obj, l.freq, l.idle)
	if r := db.keys.recs.Get(ent.s1); r != nil {
		r.SetClock(ent.obj.header().atime)
	}
	l.res.Keys++
	return nil
}

// tryNative stores a second copy of a native value in a scratch engine and
// dumps it, reporting whether that went without a panic: a family builds
// its indexes on attach trusting its records, which a forged file could
// break (as RESTORE's trialAttach).
func (l *rdbLoad) tryNative(ent *rdbEntry) (ok bool) {
	obj, err := decodeDump(append([]byte{ent.op}, ent.raw...), &l.e.limits)
	if err != nil {
		return false
	}
	if l.scratch == nil {
		l.scratch = New(Options{Databases: 1, Clock: NewManualClock(time.UnixMilli(l.e.now))})
	}
	s := l.scratch
	s.limits, s.now = l.e.limits, l.e.now
	defer func() {
		if recover() != nil {
			l.scratch, ok = nil, false // its state is unknown
		}
	}()
	db := s.dbs[0]
	db.add([]byte("k"), obj, 0)
	db.DumpKey([]byte("k"))
	db.Delete([]byte("k"))
	return true
}

// rdbLoadWindow is the read window's initial size.
var rdbLoadWindow = 1 << 20

// rdbInput is the file as a window of its bytes: an entry is decoded from
// the window, and when it does not fit the window is refilled (and grown)
// and the entry decoded again.
type rdbInput struct {
	src     io.Reader
	buf     []byte // buf[off:] is not decoded yet
	off     int
	eof     bool   // src has nothing more
	readErr error  // what src failed with, other than its end
	dropped int64  // bytes of the file before buf[0]
	crc     uint64 // of the bytes decoded so far
}

// next runs decode on the undecoded bytes until it succeeds, reading more
// each time it fails for want of bytes, until src is exhausted. The bytes
// decode consumed count as decoded; views of them stay valid until the
// next call.
func (in *rdbInput) next(decode func(r *rdbReader) error) error {
	for {
		r := rdbReader{b: in.buf[in.off:]}
		err := decode(&r)
		if err == nil {
			n := len(in.buf) - in.off - len(r.b)
			in.crc = rdbCRC64Update(in.crc, in.buf[in.off:in.off+n])
			in.off += n
			return nil
		}
		switch {
		case !r.short:
			return err // the bytes are all there, and wrong
		case in.eof:
			return ErrRDBShort
		}
		in.fill()
	}
}

// fill drops the decoded bytes and reads until the window is full. The
// window doubles when what is pending fills more than half of it, so each
// retry of an entry has at least twice the bytes of the last.
func (in *rdbInput) fill() {
	pending := len(in.buf) - in.off
	size := max(cap(in.buf), rdbLoadWindow)
	switch {
	case pending*2 > size:
		size *= 2
	case pending*2 <= rdbLoadWindow:
		size = rdbLoadWindow // let a window grown for a big value go
	}
	buf := in.buf
	if size != cap(buf) {
		buf = make([]byte, size)
	}
	copy(buf[:pending], in.buf[in.off:])
	in.dropped += int64(in.off)
	in.buf, in.off = buf[:pending], 0
	n, err := io.ReadFull(in.src, buf[pending:size])
	in.buf = buf[:pending+n]
	if err != nil {
		in.eof = true
		if err != io.EOF && err != io.ErrUnexpectedEOF {
			in.readErr = err
		}
	}
}

// fail words an error of decoding what at the current position.
func (in *rdbInput) fail(what string, err error) error {
	var unsupported *rdbUnsupported
	switch {
	case in.readErr != nil:
		return fmt.Errorf("reading the RDB file: %w", in.readErr)
	case errors.As(err, &unsupported):
		return err
	case errors.Is(err, ErrRDBShort):
		return fmt.Errorf("%w (at byte %d, reading %s)", ErrRDBShort, in.dropped+int64(in.off), what)
	}
	return fmt.Errorf("Bad data format in the RDB file at byte %d, reading %s", in.dropped+int64(in.off), what)
}

// rdbCRC64Update continues Redis's crc64 over b.
func rdbCRC64Update(crc uint64, b []byte) uint64 { return ^crc64.Update(^crc, crcJonesTable, b) }
