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
	var res RDBWriteResult
	out := rdbOutput{w: bufio.NewWriterSize(w, rdbFlushAt)}
	rw := &rdbWriter{verbatim: !o.Compress}
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
	out.put(rw)
	policy := e.eviction().cfg.Policy
	for _, db := range e.dbs {
		keys, volatile := int64(db.Len()), int64(db.volatile)
		if o.SkipNative {
			keys, volatile = db.redisKeys()
		}
		if keys == 0 {
			res.SkippedNative += int64(db.Len())
			continue
		}
		rw.b = append(rw.b, rdbOpSelectDB)
		rw.length(uint64(db.id))
		rw.b = append(rw.b, rdbOpResizeDB)
		rw.length(uint64(keys))
		rw.length(uint64(volatile))
		db.keys.recs.ForEach(func(r flat.Record) bool {
			if o.SkipNative && !redisType(recType(r)) {
				res.SkippedNative++
				return true
			}
			db.writeRDBKey(rw, r, policy)
			res.Keys++
			if len(rw.b) >= rdbFlushAt {
				out.put(rw)
			}
			return out.err == nil
		})
	}
	rw.b = append(rw.b, rdbOpEOF)
	out.put(rw)
	// The checksum is the one thing not covered by itself.
	out.write(binary.LittleEndian.AppendUint64(nil, out.crc))
	if out.err == nil {
		out.err = out.w.Flush()
	}
	return res, out.err
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
