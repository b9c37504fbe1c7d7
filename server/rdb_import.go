package server

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/revolver-db/revolver/engine"
	"github.com/revolver-db/revolver/persistence"
)

// import-rdb: Revolver started on a Redis data directory loads the dump it
// finds there (dir/dbfilename) on the first start of its own data
// directory, and never again once it has data of its own. A persistent
// import is made all or nothing by a marker (persistence.BeginImport):
// written before the store is created, removed once what the import wrote
// is fsynced; a start that finds it imports again from empty. With
// persistence off there is no data of Revolver's, and the dump is loaded at
// every start, as Redis loads its own.

// planImport decides, before the store is opened, whether this start
// imports a dump, and marks the import begun. It returns the dump's path
// ("" for none) and whether an earlier import must be redone from empty.
func (s *Server) planImport(lay persistence.Layout) (path string, again bool, err error) {
	dump := filepath.Join(lay.Dir, s.cfg.extraString("dbfilename"))
	pending, err := persistence.ImportPending(s.cfg.FS, lay.Own)
	switch {
	case err != nil:
		return "", false, err
	case pending && !s.cfg.ImportRDB:
		return "", false, fmt.Errorf("an import of %s into %s began and did not finish: start with import-rdb yes to "+
			"import it again from empty, or remove %s to start empty", dump, lay.Own, lay.Own)
	case pending:
		s.log.Warn("an import of a Redis dump did not finish: importing it again from empty", "file", dump)
		return dump, true, nil
	case !s.cfg.ImportRDB:
		return "", false, nil
	}
	has, err := persistence.HasStore(s.cfg.FS, lay.Own)
	if err != nil {
		return "", false, err
	}
	if has {
		s.log.Info("import-rdb: Revolver has data of its own here, the dump is not imported again", "dir", lay.Own)
		return "", false, nil
	}
	if _, err := os.Stat(dump); errors.Is(err, os.ErrNotExist) {
		s.log.Info("import-rdb: no Redis dump to import", "file", dump)
		return "", false, nil
	} else if err != nil {
		return "", false, err
	}
	if err := persistence.BeginImport(s.cfg.FS, lay.Own); err != nil {
		return "", false, fmt.Errorf("data directory %s: %w", lay.Own, err)
	}
	return dump, false, nil
}

// finishImport imports the dump into the store just opened, makes it
// durable and ends the import.
func (s *Server) finishImport(own, path string, again bool) error {
	if err := s.importDump(path, again); err != nil {
		return err
	}
	if err := s.store.SyncNow(); err != nil {
		return fmt.Errorf("importing %s: %w", path, err)
	}
	if err := persistence.EndImport(s.cfg.FS, own); err != nil {
		return fmt.Errorf("data directory %s: %w", own, err)
	}
	if err := writeDumpRecord(own, path); err != nil {
		s.log.Warn("cannot record the dump imported; the next save keeps it under another name", "err", err)
	}
	return nil
}

// importAtStart loads the dump of a server without a store, when asked.
func (s *Server) importAtStart() error {
	if !s.cfg.ImportRDB {
		return nil
	}
	dir, _ := filepath.Abs(s.cfg.Dir)
	path := filepath.Join(dir, s.cfg.extraString("dbfilename"))
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		s.log.Info("import-rdb: no Redis dump to import", "file", path)
		return nil
	}
	return s.importDump(path, false)
}

// importDump loads the Redis dump at path (keys past their deadline are
// skipped), its function libraries replacing the server's; flush empties
// the keyspace first (an import done again).
func (s *Server) importDump(path string, flush bool) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("importing %s: %w", path, err)
	}
	defer f.Close()
	var size int64
	if fi, err := f.Stat(); err == nil {
		size = fi.Size()
	}
	start := time.Now()
	s.log.Info("importing Redis dump", "file", path, "bytes", size)
	pr := &progressReader{r: f, total: size, log: func(read int64) {
		s.log.Info("importing Redis dump", "file", path, "read", read, "of", size,
			"elapsed", time.Since(start).Round(time.Millisecond))
	}, last: start}
	s.eng.Lock()
	defer s.eng.Unlock()
	if flush {
		s.eng.FlushAll()
	}
	var codes []string
	res, err := s.eng.LoadRDB(bufio.NewReaderSize(pr, 1<<20), engine.RDBLoadOptions{Function: func(code []byte) error {
		codes = append(codes, string(code))
		return nil
	}})
	if err != nil {
		return fmt.Errorf("importing %s (%d keys read): %w", path, res.Keys, err)
	}
	if err := s.lua.ReplaceLibraries(s.eng, codes); err != nil {
		return fmt.Errorf("importing %s: function library: %w", path, err)
	}
	s.eng.MarkSaved() // as after Redis's load: nothing to save yet
	s.loadedKeys += int(res.Keys)
	s.loadedExpired = res.Expired
	if fi, err := os.Stat(path); err == nil {
		s.importedDump = dumpIdentity(path, fi) // a save may replace it (keepForeignDump)
	}
	s.log.Info("imported Redis dump", "file", path, "keys", res.Keys, "expired_skipped", res.Expired,
		"functions", len(codes), "rdb_version", res.Version, "elapsed", time.Since(start).Round(time.Millisecond))
	return nil
}

// progressReader logs how far a long read got, every second.
type progressReader struct {
	r     io.Reader
	total int64
	read  int64
	last  time.Time
	log   func(read int64)
}

func (p *progressReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	p.read += int64(n)
	if now := time.Now(); now.Sub(p.last) >= time.Second {
		p.last = now
		p.log(p.read)
	}
	return n, err
}
