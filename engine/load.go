package engine

import (
	"fmt"
)

// Decoders rebuild a value from its persisted value record; each type file
// registers its own.
var decoders = map[Type]func(payload []byte) (Object, error){}

func registerDecoder(t Type, fn func(payload []byte) (Object, error)) { decoders[t] = fn }

// itemLoader is implemented by composite values whose sub-records are
// loaded one by one after their value record.
type itemLoader interface {
	loadItem(item, val []byte) error
}

// limitsLoader is implemented by values whose encoding depends on the
// encoding thresholds (hashes, sets): LoadValue hands them the engine's
// thresholds before their items arrive, so the encoding is derived from the
// contents as they load, the way Redis re-derives it when it loads a dump.
type limitsLoader interface {
	loadLimits(l *Limits)
}

// engineLoader implements Loader: it fills the keyspace without producing
// change records or events. Hold the engine lock while using it.
type engineLoader struct{ e *Engine }

// Loader returns the start-up loader. Keys whose deadline passed while the
// server was down are scheduled like any other and expire as soon as the
// timer loop starts.
func (e *Engine) Loader() Loader { return engineLoader{e} }

func (l engineLoader) db(i int) (*DB, error) {
	if i < 0 || i >= len(l.e.dbs) {
		return nil, fmt.Errorf("record for database %d, but only %d databases are configured", i, len(l.e.dbs))
	}
	return l.e.byPhys[i], nil // records are stored by physical number
}

func (l engineLoader) LoadValue(dbi int, key []byte, t Type, payload []byte) error {
	db, err := l.db(dbi)
	if err != nil {
		return err
	}
	dec, ok := decoders[t]
	if !ok {
		return fmt.Errorf("key %q has unknown type %d", key, t)
	}
	obj, err := dec(payload)
	if err != nil {
		return fmt.Errorf("key %q: %w", key, err)
	}
	l.e.created(obj)
	if ll, ok := obj.(limitsLoader); ok {
		ll.loadLimits(&l.e.limits)
	}
	// A key loaded again keeps its deadline, which has its own record.
	old, expire := db.keys.recs.Get(key), int64(0)
	if old != nil {
		expire = old.Expire()
	}
	db.keys.put(key, old, obj, obj.header().atime, expire)
	if _, ok := obj.(keyBound); ok {
		// Attached once its items are in (finishLoad).
		l.e.loadedBound = append(l.e.loadedBound, dbKey{dbi, string(key)})
	}
	return nil
}

// finishLoad attaches the key-bound values a load brought in, now that
// their items are in: timers that came due while the server was down are
// due at once.
func (e *Engine) finishLoad() {
	for _, lk := range e.loadedBound {
		db := e.byPhys[lk.db]
		if obj := db.keys.ref(db.keys.recs.Get(bytesOf(lk.key))); obj != nil {
			db.attach(lk.key, obj)
		}
	}
	e.loadedBound = nil
}

// FinishLoad completes a load done through Loader. Start calls it; tests
// that load without starting the timer loop call it themselves.
func (e *Engine) FinishLoad() { e.finishLoad() }

func (l engineLoader) LoadExpire(dbi int, key []byte, at int64) error {
	db, err := l.db(dbi)
	if err != nil {
		return err
	}
	r := db.keys.recs.Get(key)
	if r == nil {
		return fmt.Errorf("expiry record for missing key %q", key)
	}
	if old := r.Expire(); old == 0 {
		db.volatile++
	} else {
		db.unscheduleExpire(key, old)
	}
	db.keys.recs.SetExpire(key, at)
	l.e.schedule(Timer{When: at, Kind: TimerExpire, DB: uint8(db.phys), Key: str(key)})
	return nil
}

func (l engineLoader) LoadItem(dbi int, key []byte, item, val []byte) error {
	db, err := l.db(dbi)
	if err != nil {
		return err
	}
	obj := db.rawObject(key)
	if obj == nil {
		return fmt.Errorf("item record for missing key %q", key)
	}
	il, ok := obj.(itemLoader)
	if !ok {
		return fmt.Errorf("item record for key %q of type %s", key, obj.Type())
	}
	return il.loadItem(item, val)
}
