package server

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/revolver-db/revolver/commands"
	"github.com/revolver-db/revolver/engine"
	"github.com/revolver-db/revolver/persistence"
)

// SAVE and BGSAVE write dump.rdb at dir/dbfilename in Redis 7.0's format,
// beside Revolver's checkpoint (decision 0016): the checkpoint is how
// Revolver restores, the dump what redis-server and Redis's tools load.
// Keys of Revolver's own types are left out of the dump (counted in the log
// and INFO), so that redis-server always loads it. SAVE writes it under the
// engine lock; BGSAVE from the checkpoint it has just made, a batch of keys
// at a time, without the engine lock.

// dumpBatchBytes is how much of the checkpoint BGSAVE loads at a time.
const dumpBatchBytes = 4 << 20

var errSaveCancelled = errors.New("save cancelled: the server is shutting down")

// dumpJob is one dump.rdb to write, with what the file says of the server
// as of the command.
type dumpJob struct {
	path      string // dir/dbfilename
	own       string // Revolver's own directory: the checkpoint's and DumpRecord's
	opts      engine.RDBWriteOptions
	limits    engine.Limits
	databases int
}

// newDumpJob describes the dump a save starts now. Under the engine lock.
func (s *Server) newDumpJob(own string) dumpJob {
	var functions [][]byte
	for _, code := range s.lua.LibraryCodes() {
		functions = append(functions, []byte(code))
	}
	dir, _ := filepath.Abs(s.cfg.Dir)
	return dumpJob{
		path: filepath.Join(dir, s.cfg.extraString("dbfilename")),
		own:  own,
		opts: engine.RDBWriteOptions{
			// The fields redis-server writes for a SAVE outside replication.
			Aux: [][2]string{
				{"redis-ver", commands.Version},
				{"redis-bits", strconv.Itoa(32 << (^uint(0) >> 63))},
				{"ctime", strconv.FormatInt(time.Now().Unix(), 10)},
				{"used-mem", strconv.FormatInt(s.usedMemory.Load(), 10)},
				{"aof-base", "0"},
			},
			Functions:  functions,
			Compress:   s.cfg.extraString("rdbcompression") == "yes",
			NoChecksum: s.cfg.extraString("rdbchecksum") == "no",
			SkipNative: true,
		},
		limits:    s.engineLimits(),
		databases: s.cfg.Databases,
	}
}

// writeDumpNow writes the dump from the live keyspace. Under the engine
// lock (SAVE, SHUTDOWN, FLUSHALL's save).
func (s *Server) writeDumpNow(j dumpJob) error {
	return s.writeDumpFile(j, func(w io.Writer) (engine.RDBWriteResult, error) { return s.eng.WriteRDB(w, j.opts) })
}

// writeDumpFromCheckpoint writes the dump from the checkpoint in j.own,
// loading it into a small engine a batch of keys at a time. Any goroutine;
// it takes no lock of the server's.
func (s *Server) writeDumpFromCheckpoint(j dumpJob) error {
	cp, err := persistence.OpenCheckpoint(persistence.CheckpointDir(j.own), s.log)
	if err != nil {
		return err
	}
	defer cp.Close()
	return s.writeDumpFile(j, func(w io.Writer) (engine.RDBWriteResult, error) {
		return s.writeRDBFromView(cp, w, j.opts, j.limits, j.databases)
	})
}

// serverRecords collects a checkpoint's server records.
type serverRecords [][2][]byte

func (r *serverRecords) LoadServer(name, val []byte) error {
	*r = append(*r, [2][]byte{append([]byte(nil), name...), append([]byte(nil), val...)})
	return nil
}

func (r *serverRecords) LoadValue(int, []byte, engine.Type, []byte) error { return nil }
func (r *serverRecords) LoadExpire(int, []byte, int64) error              { return nil }
func (r *serverRecords) LoadItem(int, []byte, []byte, []byte) error       { return nil }

// writeDumpFile writes the dump as Redis's rdbSave does: into temp-<pid>.rdb
// beside it, flushed and fsynced, then renamed over dbfilename and the
// directory fsynced. A dump.rdb this server did not write or import is
// kept under another name rather than replaced (keepForeignDump).
func (s *Server) writeDumpFile(j dumpJob, write func(io.Writer) (engine.RDBWriteResult, error)) error {
	start := time.Now()
	dir := filepath.Dir(j.path)
	tmp := filepath.Join(dir, "temp-"+strconv.Itoa(os.Getpid())+".rdb")
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("failed opening the temp RDB file %s for saving: %w", tmp, err)
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	res, err := write(bw)
	if err == nil {
		err = bw.Flush()
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = s.keepForeignDump(j)
	}
	if err == nil {
		err = os.Rename(tmp, j.path)
	}
	if err == nil {
		err = syncPath(dir)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing %s: %w", j.path, err)
	}
	if err := writeDumpRecord(j.own, j.path); err != nil {
		s.log.Warn("cannot record which dump.rdb Revolver wrote; the next save keeps it under another name", "err", err)
	}
	s.bg.nativeSkipped.Store(res.SkippedNative)
	if res.SkippedNative > 0 {
		s.log.Warn("keys of Revolver's own types left out of the dump (redis-server cannot load them; the checkpoint keeps them)",
			"file", j.path, "keys", res.SkippedNative)
	}
	s.log.Info("DB saved on disk", "file", j.path, "keys", res.Keys, "elapsed", time.Since(start).Round(time.Millisecond))
	return nil
}

// keepForeignDump renames a dump.rdb this server neither wrote nor imported
// to dbfilename.orig-<unix time> before a save replaces it: Revolver
// started on a Redis data directory without --import-rdb must not destroy
// Redis's data with its first save.
func (s *Server) keepForeignDump(j dumpJob) error {
	fi, err := os.Stat(j.path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	} else if err != nil {
		return err
	}
	if knownDump(j.own, j.path, fi) || s.importedDump == dumpIdentity(j.path, fi) {
		return nil
	}
	kept := j.path + ".orig-" + strconv.FormatInt(time.Now().Unix(), 10)
	if err := os.Rename(j.path, kept); err != nil {
		return err
	}
	s.log.Warn("a dump Revolver did not write nor import was in the way of the save: kept under another name",
		"file", j.path, "kept", kept)
	return nil
}

// syncPath fsyncs a directory (or file) by name.
func syncPath(path string) error {
	d, err := os.Open(path)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}
