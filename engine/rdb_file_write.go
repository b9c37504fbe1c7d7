package engine

import (
	"bufio"
	"encoding/binary"
	"io"

	"github.com/revolver-db/revolver/flat"
)

// RDBWriteOptions tune WriteRDB.
type RDBWriteOptions struct {
	// Aux are the AUX fields written after the header, in order (the caller supplies
	// redis-ver, redis-bits, ctime, used-mem, repl-stream-db, repl-id, repl-offset, aof-base).
	Aux [][2]string
	// Functions are the function libraries' code, written as RDB_OPCODE_FUNCTION2 before the keys.
	Functions [][]byte
	// Compress is rdbcompression: LZF-compress strings longer than 20 bytes, as Redis does.
	Compress bool
	// SkipNative leaves out keys of Revolver's own types (DELAY, QUEUE, NUMPOOL, ROOM...),
	// which a redis-server cannot load; they are counted in the result.
	SkipNative bool
	// NoChecksum writes a zero checksum (rdbchecksum no); loaders skip the check.
	NoChecksum bool
}

// RDBWriteResult counts what WriteRDB wrote and left out.
type RDBWriteResult struct {
	Keys, SkippedNative int64
}

// rdbFlushAt is how many bytes of encoded keys are gathered before they go
// to the writer.
const rdbFlushAt = 64 << 10

// WriteRDB writes the whole keyspace as an RDB version 10 file (what redis-server 7.0 writes and
// loads): header "REDIS0010", aux fields, functions, then per non-empty database SELECTDB,
// RESIZEDB, and each key with EXPIRETIME_MS when it has a deadline, then EOF and the CRC-64.
// Call it with the engine lock held; nothing is modified.
//
// As Redis 7.0's rdbSaveRio, keys whose deadline has passed but that are
// still stored are written with their deadline (the loader decides), and
// under an LRU or LFU maxmemory-policy each key is preceded by its idle
// time (IDLE) or its decayed access counter (FREQ).
func (e *Engine) WriteRDB(w io.Writer, o RDBWriteOptions) (RDBWriteResult, error) {
	f := NewRDBFile(w, o)
	f.WriteKeys(e)
	return f.Close()
}

// RDBFile writes an RDB file in pieces: the header when made, then the keys
// of one engine after another (WriteKeys), then the end (Close). A save
// that reads a checkpoint loads it into small engines a batch of keys at a
// time and writes each, so the file never needs the whole dataset in
// memory twice, nor the live engine's lock.
type RDBFile struct {
	out rdbOutput
	rw  rdbWriter
	o   RDBWriteOptions
	res RDBWriteResult
	db  int // the database of the last SELECTDB, -1 before one
}

// NewRDBFile starts an RDB file on w: its header, aux fields and functions.
// Nothing is written to w before the first WriteKeys or Close.
func NewRDBFile(w io.Writer, o RDBWriteOptions) *RDBFile {
	f := &RDBFile{out: rdbOutput{w: bufio.NewWriterSize(w, rdbFlushAt)}, rw: rdbWriter{verbatim: !o.Compress},
		o: o, db: -1}
	rw := &f.rw
	rw.b = append(rw.b, "REDIS0010"...)
	for _, a := range o.Aux {
		rw.b = append(rw.b, rdbOpAux)
		rw.str([]byte(a[0]))
		rw.str([]byte(a[1]))
	}
	for _, code := range o.Functions {
		rw.b = append(rw.b, rdbOpFunction2)
		rw.str(code)
	}
	f.out.put(rw)
	return f
}

// WriteKeys writes every key of e, by database. A database that follows
// the previous call's last one goes on without a new SELECTDB, and its
// RESIZEDB hint is the count e held. Call it with e's lock held; nothing is
// modified.
func (f *RDBFile) WriteKeys(e *Engine) error {
	rw, o := &f.rw, f.o
	policy := e.eviction().cfg.Policy
	for _, db := range e.dbs {
		if f.out.err != nil {
			break
		}
		keys, volatile := int64(db.Len()), int64(db.volatile)
		if o.SkipNative {
			keys, volatile = db.redisKeys()
		}
		if keys == 0 {
			f.res.SkippedNative += int64(db.Len())
			continue
		}
		if db.id != f.db {
			rw.b = append(rw.b, rdbOpSelectDB)
			rw.length(uint64(db.id))
			rw.b = append(rw.b, rdbOpResizeDB)
			rw.length(uint64(keys))
			rw.length(uint64(volatile))
			f.db = db.id
		}
		db.keys.recs.ForEach(func(r flat.Record) bool {
			if o.SkipNative && !redisType(recType(r)) {
				f.res.SkippedNative++
				return true
			}
			db.writeRDBKey(rw, r, policy)
			f.res.Keys++
			if len(rw.b) >= rdbFlushAt {
				f.out.put(rw)
			}
			return f.out.err == nil
		})
	}
	f.out.put(rw)
	return f.out.err
}

// Close ends the file: EOF, the CRC-64 (zeros with NoChecksum, as Redis
// writes it with rdbchecksum no), and flushes.
func (f *RDBFile) Close() (RDBWriteResult, error) {
	f.rw.b = append(f.rw.b, rdbOpEOF)
	f.out.put(&f.rw)
	// The checksum is the one thing not covered by itself.
	sum := f.out.crc
	if f.o.NoChecksum {
		sum = 0
	}
	f.out.write(binary.LittleEndian.AppendUint64(nil, sum))
	if f.out.err == nil {
		f.out.err = f.out.w.Flush()
	}
	return f.res, f.out.err
}

// writeRDBKey appends the key of r with what precedes it: its deadline,
// and the access information the eviction policy keeps.
func (db *DB) writeRDBKey(rw *rdbWriter, r flat.Record, policy EvictionPolicy) {
	if at := r.Expire(); at != 0 {
		rw.b = binary.LittleEndian.AppendUint64(append(rw.b, rdbOpExpireMs), uint64(at))
	}
	switch policy {
	case PolicyAllKeysLRU, PolicyVolatileLRU:
		rw.b = append(rw.b, rdbOpIdle)
		rw.length(db.e.idleMillisOf(r.Clock()) / 1000)
	case PolicyAllKeysLFU, PolicyVolatileLFU:
		counter := lfuDecayed(r.Clock(), db.e.lfuMinutes(), db.e.eviction().cfg.DecayTime)
		rw.b = append(rw.b, rdbOpFreq, counter)
	}
	if !r.IsRef() { // a string kept in its record
		rw.b = append(rw.b, rdbTypeString)
		rw.str(r.Key())
		rw.str(r.Value())
		return
	}
	// The type byte comes before the key, the value after it: the
	// object's type byte is moved in front of the key.
	start := len(rw.b)
	rw.b = append(rw.b, 0)
	rw.str(r.Key())
	typeAt := len(rw.b)
	rw.object(db.keys.objs[r.Ref()])
	rw.b[start] = rw.b[typeAt]
	rw.b = append(rw.b[:typeAt], rw.b[typeAt+1:]...)
}

// redisKeys counts the keys of Redis's types and those of them with a
// deadline: RESIZEDB's hints when the others are left out.
func (db *DB) redisKeys() (keys, volatile int64) {
	db.keys.recs.ForEach(func(r flat.Record) bool {
		if redisType(recType(r)) {
			keys++
			if r.Expire() != 0 {
				volatile++
			}
		}
		return true
	})
	return keys, volatile
}

// redisType reports whether values of t are Redis's (a redis-server loads
// them).
func redisType(t Type) bool { return t.nativeExcluded() || t == TypeStream }

// rdbOutput writes the file, keeping its running CRC-64 and its first
// write error.
type rdbOutput struct {
	w   *bufio.Writer
	crc uint64
	err error
}

// put writes and checksums what rw gathered and empties it.
func (o *rdbOutput) put(rw *rdbWriter) {
	o.crc = rdbCRC64Update(o.crc, rw.b)
	o.write(rw.b)
	rw.b = rw.b[:0]
}

func (o *rdbOutput) write(b []byte) {
	if o.err == nil {
		_, o.err = o.w.Write(b)
	}
}
