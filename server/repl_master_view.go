package server

import (
	"io"

	"github.com/revolver-db/revolver/engine"
	"github.com/revolver-db/revolver/persistence"
)

// A full sync on a server with a store is written from a view of the store
// as of the sync's offset (persistence/view.go), on a goroutine of its own,
// as BGSAVE writes dump.rdb from its checkpoint: the event loop goes on
// serving while the RDB is written, and the replica gets +FULLRESYNC, then
// newlines, then the file, then the stream queued behind it.

// writeSyncFromView asks the store for the view and writes t's file from it
// once the applier has it. Under the engine lock.
func (s *Server) writeSyncFromView(c *Client, t *bulkTransfer, j syncJob) error {
	s.eng.FlushChanges()
	c.peer().preparing.Store(true)
	s.replm.writers.Add(1)
	err := s.store.ViewThen(func(v *persistence.Checkpoint, err error) {
		go func() { // not on the applier's goroutine, which must go on
			defer s.replm.writers.Done()
			defer c.loop.post(c, postFlush)
			if err != nil {
				t.finish(&syncFile{err: err})
				return
			}
			defer v.Close()
			f, size, err := s.writeSyncRDB(j, func(w io.Writer) (engine.RDBWriteResult, error) {
				return s.writeRDBFromView(v, w, j.opts, j.limits, j.databases)
			})
			if err != nil {
				t.finish(&syncFile{err: err})
				return
			}
			t.ready(f, size)
		}()
	})
	if err != nil {
		s.replm.writers.Done()
		c.rp.preparing.Store(false)
		return err
	}
	return nil
}

// writeRDBFromView writes an RDB of what the view holds, loading it into a
// small engine a batch of keys at a time. Any goroutine; it takes no lock
// of the server's, and stops when the server shuts down.
func (s *Server) writeRDBFromView(v *persistence.Checkpoint, w io.Writer, opts engine.RDBWriteOptions,
	limits engine.Limits, databases int) (engine.RDBWriteResult, error) {
	// The server records (the SWAPDB map among them) go into every batch's
	// engine, so that its keys land in their logical databases.
	var server serverRecords
	if err := v.LoadServer(&server); err != nil {
		return engine.RDBWriteResult{}, err
	}
	f := engine.NewRDBFile(w, opts)
	var batch *engine.Engine
	begin := func() (engine.Loader, error) {
		if s.bg.cancel.Load() {
			return nil, errSaveCancelled
		}
		batch = engine.New(engine.Options{Databases: databases, Clock: s.clock})
		batch.Lock()
		batch.SetLimits(limits)
		l := batch.Loader()
		for _, r := range server {
			if err := l.LoadServer(r[0], r[1]); err != nil {
				return nil, err
			}
		}
		return l, nil
	}
	end := func() error {
		err := f.WriteKeys(batch)
		batch.Unlock()
		batch = nil
		return err
	}
	_, err := v.LoadKeys(dumpBatchBytes, begin, end)
	if batch != nil {
		batch.Unlock()
	}
	if err != nil {
		return engine.RDBWriteResult{}, err
	}
	return f.Close()
}
