package engine

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/revolver-db/revolver/flat"
)

// TestRDBFilePieces: an RDB written from several engines in turn (a save
// reading a checkpoint a batch at a time) loads to the keyspace they hold
// together, a database split across two pieces included.
func TestRDBFilePieces(t *testing.T) {
	src := rdbSourceEngine(t)
	pieces := []*Engine{New(Options{Clock: src.clock}), New(Options{Clock: src.clock})}
	for _, p := range pieces {
		p.Lock()
		defer p.Unlock()
	}
	// The first piece has the first half of database 0, the second the rest.
	half := src.dbs[0].Len() / 2
	for i, db := range src.dbs {
		n := 0
		db.keys.recs.ForEach(func(r flat.Record) bool {
			to := pieces[1]
			if i == 0 && n < half {
				to = pieces[0]
			}
			n++
			obj, err := to.ParseDumpPayload(DumpPayload(db.keys.object(r)))
			if err != nil {
				t.Fatal(err)
			}
			to.dbs[i].Restore(r.Key(), obj, RestoreOptions{TTL: r.Expire(), AbsTTL: true, IdleTime: -1, Freq: -1})
			return true
		})
	}
	var buf bytes.Buffer
	f := NewRDBFile(&buf, RDBWriteOptions{Compress: true, SkipNative: true})
	for _, p := range pieces {
		if err := f.WriteKeys(p); err != nil {
			t.Fatal(err)
		}
	}
	res, err := f.Close()
	if err != nil {
		t.Fatal(err)
	}
	whole, wres := writeRDB(t, src, RDBWriteOptions{Compress: true, SkipNative: true})
	if res != wres {
		t.Errorf("pieces wrote %+v, the whole engine %+v", res, wres)
	}
	// Database 0 continues in the second piece without a SELECTDB: the
	// same bytes but for the order of the keys and the first RESIZEDB.
	if buf.Len() != len(whole) {
		t.Errorf("pieces wrote %d bytes, the whole engine %d", buf.Len(), len(whole))
	}
	dst, lres, err := loadRDB(t, buf.Bytes(), nil, RDBLoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if lres.Keys != res.Keys {
		t.Fatalf("loaded %d keys, wrote %d", lres.Keys, res.Keys)
	}
	sameKeyspace(t, src, dst, func(t Type) bool { return !redisType(t) })
}

// TestRDBFileNoChecksum: rdbchecksum no writes a zero checksum, which
// loaders accept without checking.
func TestRDBFileNoChecksum(t *testing.T) {
	src := rdbSourceEngine(t)
	file, _ := writeRDB(t, src, RDBWriteOptions{NoChecksum: true})
	if sum := binary.LittleEndian.Uint64(file[len(file)-8:]); sum != 0 {
		t.Fatalf("checksum %x, want 0", sum)
	}
	dst, _, err := loadRDB(t, file, nil, RDBLoadOptions{KeepExpired: true})
	if err != nil {
		t.Fatal(err)
	}
	if dst.dbs[0].Len() != src.dbs[0].Len() {
		t.Errorf("loaded %d keys of database 0, want %d", dst.dbs[0].Len(), src.dbs[0].Len())
	}
}
