package engine

import (
	"strings"

	"github.com/tidwall/btree"
)

// The engine's extension point for native families (DELAY; QUEUE, NUMPOOL
// and ROOM after it). Their values keep state outside themselves that names
// their key: scheduler entries for due times, leases and presence. Three
// registries let a family keep all of that in its own files, so that the
// keyspace code (db.go, load.go, engine.go) names no family (and a family
// may also hook client disconnects, registerClientHook):
//
//   - keyBound: a value type that implements it is told when it is stored
//     under a key name and when it leaves it, so its scheduler entries
//     follow RENAME, MOVE and COPY and go with DEL, overwrite, expiry and
//     FLUSHDB; a value loaded at start-up is attached once the load is done.
//   - registerTimerKind: a family's own kind of scheduler entry and the
//     handler that fires it. The scheduler stays one ordered index.
//   - newFamilyState: a value of the family's own in every engine, for
//     scratch space and the counters of its INFO section.

// keyBound is implemented by value types whose state outside the value
// names the key they are stored under. The engine pairs the calls: a value
// is attached to at most one name at a time, and detached before it is
// attached elsewhere.
type keyBound interface {
	Object
	// attached: the value is now stored under k in db (a write, the target
	// of RENAME, MOVE or COPY, or the end of a load).
	attached(db *DB, k string)
	// detached: the value leaves k (DEL, overwrite, expiry, FLUSHDB, the
	// source of RENAME or MOVE).
	detached(db *DB, k string)
}

// attach tells a key-bound value it is stored under k.
func (db *DB) attach(k string, obj Object) {
	b, ok := obj.(keyBound)
	if !ok {
		return
	}
	if db.bound == nil {
		db.bound = new(btree.Map[string, keyBound])
	}
	k = strings.Clone(k) // k may be a view of a command's argument
	db.bound.Set(k, b)
	b.attached(db, k)
}

// detach tells a key-bound value it leaves k.
func (db *DB) detach(k string, obj Object) {
	b, ok := obj.(keyBound)
	if !ok {
		return
	}
	if db.bound != nil {
		db.bound.Delete(k)
	}
	b.detached(db, k)
}

// detachAll detaches every key-bound value of the database (FLUSHDB).
func (db *DB) detachAll() {
	bound := db.bound
	db.bound = nil
	if bound != nil {
		bound.Scan(func(k string, b keyBound) bool {
			b.detached(db, k)
			return true
		})
	}
}

// eachBound calls fn for every key-bound value of the database, in key
// order.
func (db *DB) eachBound(fn func(k string, b keyBound)) {
	if db.bound == nil {
		return
	}
	db.bound.Scan(func(k string, b keyBound) bool {
		fn(k, b)
		return true
	})
}

// timerKind is a registered kind of scheduler entry.
type timerKind struct {
	name string
	fire func(e *Engine, t Timer)
}

// timerKinds are indexed by TimerKind. Expiry is the engine's own and comes
// first; block timeouts come last (TimerBlock), so that at one instant a
// key made ready by a family's entry serves a waiter before its timeout does.
var timerKinds [TimerBlock + 1]timerKind

// numFamilyKinds counts the kinds registered so far.
var numFamilyKinds TimerKind

// registerTimerKind gives a family its own kind of scheduler entry, fired by
// fire under the engine lock. Call it from an init function (the handler
// usually refers to the kind, which a variable initializer cannot).
func registerTimerKind(name string, fire func(e *Engine, t Timer)) TimerKind {
	numFamilyKinds++
	k := TimerExpire + numFamilyKinds
	if k >= TimerBlock {
		panic("engine: too many timer kinds")
	}
	timerKinds[k] = timerKind{name: name, fire: fire}
	return k
}

func init() {
	timerKinds[TimerExpire] = timerKind{name: "expire", fire: (*Engine).fireExpire}
	timerKinds[TimerBlock] = timerKind{name: "block", fire: (*Engine).fireBlockTimeout}
}

// clientHooks are called when a client disconnects (Engine.ClientClosed):
// a family that hands out something held by a connection takes it back.
var clientHooks []func(e *Engine, client int64)

// registerClientHook adds a hook run, under the engine lock, when a client
// disconnects. Call it from an init function.
func registerClientHook(h func(e *Engine, client int64)) { clientHooks = append(clientHooks, h) }

// ClientClosed tells the families that a client disconnected. The server
// calls it under the engine lock.
func (e *Engine) ClientClosed(client int64) {
	if e.frozen {
		e.closedFrozen = append(e.closedFrozen, client)
		return
	}
	if e.rx.on {
		return // what clients hold is the master's, released by its word (ClientClosedByMaster)
	}
	for _, h := range clientHooks {
		h(e, client)
	}
}

// familyStates holds the constructor of every family's per-engine state, by
// slot (newFamilyState).
var familyStates []func() any

// familyState is a slot of per-engine state holding a *T.
type familyState[T any] int

// newFamilyState reserves a slot of per-engine state of type T; every
// engine made afterwards holds a zero T in it. Call it from a package-level
// variable initializer.
func newFamilyState[T any]() familyState[T] {
	familyStates = append(familyStates, func() any { return new(T) })
	return familyState[T](len(familyStates) - 1)
}

// of is e's state in this slot.
func (s familyState[T]) of(e *Engine) *T { return e.families[s].(*T) }

func newFamilies() []any {
	f := make([]any, len(familyStates))
	for i, mk := range familyStates {
		f[i] = mk()
	}
	return f
}
