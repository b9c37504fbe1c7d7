package engine

import (
	"testing"
	"time"
)

// On a replica a key past its deadline reads as absent but stays until the
// master deletes it; the master's own commands still see it; timers that
// fire are held, and a promotion applies them.
func TestReplicaKeepsExpiredKeysForTheMaster(t *testing.T) {
	e, clock, log := newTestEngine(t)
	e.Lock()
	e.SetReplica(true)
	db := e.DB(0)
	now := e.Now()
	for _, k := range []string{"a", "b", "c", "d"} {
		db.SetString(b(k), b("v"), SetOptions{ExpireAt: now + 100})
	}
	log.take()
	e.Unlock()

	clock.Advance(time.Second)
	e.RunTimers() // the timers fire: held, nothing deleted
	e.Lock()
	if _, ok := mustGet(t, db, "a"); ok {
		t.Error("a client read a key past its deadline")
	}
	if n := db.Len(); n != 4 {
		t.Errorf("%d keys left; the replica deleted some itself", n)
	}
	if got := log.take(); got != "keymiss a" {
		t.Errorf("events %q", got)
	}
	if db.RandomKey() == nil || len(db.keysOf()) != 0 {
		t.Error("RANDOMKEY and KEYS")
	}

	// The master's stream: it moves b's deadline and appends to c, keys it
	// still holds; then it deletes a.
	e.SetApplyingMaster(true)
	if !db.SetExpire(b("b"), now+1_000_000) {
		t.Error("the master's PEXPIREAT found no key")
	}
	if v, ok := mustGet(t, db, "c"); !ok || v != "v" {
		t.Errorf("the master reads c: %q %v", v, ok)
	}
	if !db.Delete(b("a")) {
		t.Error("the master's DEL found no key")
	}
	e.SetApplyingMaster(false)
	if v, ok := mustGet(t, db, "b"); !ok || v != "v" {
		t.Errorf("b after its new deadline: %q %v", v, ok)
	}
	if db.Len() != 3 {
		t.Errorf("%d keys", db.Len())
	}

	// Promoted, the deadlines that passed apply: c and d go, b stays.
	e.SetReplica(false)
	if db.Len() != 1 {
		t.Errorf("%d keys after the promotion, want b only", db.Len())
	}
	if _, ok := mustGet(t, db, "b"); !ok {
		t.Error("b was lost")
	}
	e.Unlock()
}

// keysOf lists the live keys as KEYS * does.
func (db *DB) keysOf() []string {
	var out []string
	db.Keys(nil, func(k string) { out = append(out, k) })
	return out
}

// DEBUG SET-ACTIVE-EXPIRE 0: a key past its deadline stays until a command
// finds it; turned back on, the deadlines that passed apply.
func TestActiveExpireOff(t *testing.T) {
	e, clock, _ := newTestEngine(t)
	e.Lock()
	e.SetActiveExpire(false)
	db := e.DB(0)
	now := e.Now()
	db.SetString(b("found"), b("v"), SetOptions{ExpireAt: now + 100})
	db.SetString(b("left"), b("v"), SetOptions{ExpireAt: now + 100})
	e.Unlock()

	clock.Advance(time.Second)
	e.RunTimers()
	e.Lock()
	if db.Len() != 2 {
		t.Fatalf("%d keys: the timers expired keys", db.Len())
	}
	if _, ok := mustGet(t, db, "found"); ok || db.Len() != 1 {
		t.Errorf("a lookup did not expire its key (%d keys)", db.Len())
	}
	e.SetActiveExpire(true)
	if db.Len() != 0 {
		t.Errorf("%d keys once active expiry is back", db.Len())
	}
	e.Unlock()
}
