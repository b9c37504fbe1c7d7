package persistence

import (
	"errors"
	"fmt"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/revolver-db/revolver/engine"
)

// Load progress is logged when either threshold passes.
const (
	loadLogInterval = time.Second
	loadLogRecords  = 1 << 20
)

// Load feeds every stored record to l in key order (a key's value record,
// then its expiry, then its items) and returns the number of keys. Slices
// passed to l are only valid during the call. A malformed record or a
// loader error stops the load with an error naming the record's Pebble key.
// Changes made before the call are applied to Pebble first, so Load sees
// them (at start-up there are none).
func (s *Store) Load(l engine.Loader) (keys int, err error) {
	s.waitApplied(s.w.lastNum())
	it, err := s.db.NewIter(&pebble.IterOptions{
		LowerBound: []byte{keyspaceTag},
		UpperBound: []byte{keyspaceEnd},
	})
	if err != nil {
		return 0, fmt.Errorf("data directory %s: %w", s.dir, err)
	}
	start := time.Now()
	lastLog, lastRecords := start, 0
	records := 0
	for valid := it.First(); valid; valid = it.Next() {
		k := it.Key()
		v, verr := it.ValueAndErr()
		if verr == nil {
			verr = loadRecord(l, k, v, &keys)
		}
		if verr != nil {
			_ = it.Close()
			return keys, fmt.Errorf("data directory %s: record %s: %w", s.dir, hexKey(k), verr)
		}
		records++
		if records%4096 == 0 {
			if now := time.Now(); now.Sub(lastLog) >= loadLogInterval || records-lastRecords >= loadLogRecords {
				s.log.Info("loading data", "keys", keys, "records", records, "elapsed", now.Sub(start).Round(time.Millisecond))
				lastLog, lastRecords = now, records
			}
		}
	}
	if err := errors.Join(it.Error(), it.Close()); err != nil {
		return keys, fmt.Errorf("data directory %s: %w", s.dir, err)
	}
	if err := loadServerRecords(s.db, s.dir, l); err != nil {
		return keys, err
	}
	s.log.Info("loaded data", "keys", keys, "records", records, "elapsed", time.Since(start).Round(time.Millisecond))
	return keys, nil
}

// loadServerRecords feeds l the server records of db, a store of the data
// directory dir (the state outside the databases: function libraries).
func loadServerRecords(db pebble.Reader, dir string, l engine.Loader) error {
	it, err := db.NewIter(&pebble.IterOptions{LowerBound: []byte{serverTag}, UpperBound: []byte{serverEnd}})
	if err != nil {
		return fmt.Errorf("data directory %s: %w", dir, err)
	}
	for valid := it.First(); valid; valid = it.Next() {
		v, verr := it.ValueAndErr()
		if verr == nil {
			verr = l.LoadServer(it.Key()[1:], v)
		}
		if verr != nil {
			_ = it.Close()
			return fmt.Errorf("data directory %s: record %s: %w", dir, hexKey(it.Key()), verr)
		}
	}
	if err := errors.Join(it.Error(), it.Close()); err != nil {
		return fmt.Errorf("data directory %s: %w", dir, err)
	}
	return nil
}

func loadRecord(l engine.Loader, k, v []byte, keys *int) error {
	r, err := decodeRecordKey(k)
	if err != nil {
		return err
	}
	switch r.Kind {
	case kindValue:
		t, payload, err := decodeValue(v)
		if err != nil {
			return err
		}
		*keys++
		return l.LoadValue(r.DB, r.Key, t, payload)
	case kindExpire:
		at, err := decodeExpire(v)
		if err != nil {
			return err
		}
		return l.LoadExpire(r.DB, r.Key, at)
	default:
		return l.LoadItem(r.DB, r.Key, r.Item, v)
	}
}

// hexKey renders a Pebble key for an error, shortened if huge.
func hexKey(k []byte) string {
	const max = 64
	if len(k) > max {
		return fmt.Sprintf("%x... (%d bytes)", k[:max], len(k))
	}
	return fmt.Sprintf("%x", k)
}
