package engine

import (
	"errors"
	"fmt"
)

// Revolver's own types (delay, queue, numpool, room, uv) have no Redis
// encoding. Their DUMP payload is an RDB module value (RDB_TYPE_MODULE_2)
// under a module id of Revolver's, carrying exactly the records the type
// persists itself with: the value record (type number and payload) and its
// item records, as persist writes them and a start-up load reads them. So
// RESTORE rebuilds the value the way a restart does, and MIGRATE between two
// Revolvers moves any key. redis-server refuses the payload (it has no
// module of that id), as it should.
//
// Layout, in RDB's module annotations: UINT type, STRING value payload,
// then STRING item, STRING item value per item, then EOF.

// RDB module value annotations (rdb.h).
const (
	rdbModuleOpEOF    = 0
	rdbModuleOpUint   = 2
	rdbModuleOpString = 5
)

// revolverModuleID is the module id Redis derives (moduleTypeEncodeId)
// from the 9-character type name "revolver_" and encoding version 1: six
// bits per character of its charset, then ten bits of version.
var revolverModuleID = moduleTypeID("revolver_", 1)

func moduleTypeID(name string, encver uint64) uint64 {
	const charset = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	var id uint64
	for i := 0; i < len(name); i++ {
		for j := 0; j < len(charset); j++ {
			if charset[j] == name[i] {
				id = id<<6 | uint64(j)
				break
			}
		}
	}
	return id<<10 | encver
}

// recordCapture is a ChangeSink that keeps the records persist writes.
type recordCapture struct {
	nopSink
	t       Type
	payload []byte
	items   [][2][]byte
}

func (c *recordCapture) PutValue(_ int, _ []byte, t Type, payload []byte) {
	c.t, c.payload = t, append([]byte(nil), payload...)
}

func (c *recordCapture) PutItem(_ int, _ []byte, item, val []byte) {
	c.items = append(c.items, [2][]byte{append([]byte(nil), item...), append([]byte(nil), val...)})
}

// native writes a value of one of Revolver's own types.
func (w *rdbWriter) native(obj Object) {
	var c recordCapture
	obj.persist(&c, 0, nil)
	if d, ok := obj.(interface{ dumpMeta() []byte }); ok {
		c.payload = d.dumpMeta() // the state a restart rebuilds differently
	}
	w.b = append(w.b, rdbTypeModule2)
	w.length(revolverModuleID)
	w.length(rdbModuleOpUint)
	w.length(uint64(c.t))
	w.length(rdbModuleOpString)
	w.str(c.payload)
	for _, it := range c.items {
		w.length(rdbModuleOpString)
		w.str(it[0])
		w.length(rdbModuleOpString)
		w.str(it[1])
	}
	w.length(rdbModuleOpEOF)
}

var errUnknownModule = errors.New("module value of an unknown module")

// native reads a module value written by rdbWriter.native and rebuilds it
// through the type's decoder and item loader.
func (r *rdbReader) native(lim *Limits) (Object, error) {
	id, err := r.length()
	if err != nil {
		return nil, err
	}
	if id != revolverModuleID {
		return nil, errUnknownModule
	}
	op, err := r.length()
	if err != nil || op != rdbModuleOpUint {
		return nil, errBadDump
	}
	tn, err := r.length()
	if err != nil {
		return nil, err
	}
	t := Type(tn)
	dec, ok := decoders[t]
	if !ok || uint64(t) != tn || t.nativeExcluded() {
		return nil, errBadDump
	}
	if op, err = r.length(); err != nil || op != rdbModuleOpString {
		return nil, errBadDump
	}
	payload, err := r.str()
	if err != nil {
		return nil, err
	}
	obj, err := decodeSafely(dec, payload)
	if err != nil {
		return nil, err
	}
	if ll, ok := obj.(limitsLoader); ok {
		ll.loadLimits(lim)
	}
	il, _ := obj.(itemLoader)
	for {
		op, err := r.length()
		if err != nil {
			return nil, err
		}
		if op == rdbModuleOpEOF {
			return obj, nil
		}
		if op != rdbModuleOpString || il == nil {
			return nil, errBadDump
		}
		item, err := r.str()
		if err != nil {
			return nil, err
		}
		if op, err = r.length(); err != nil || op != rdbModuleOpString {
			return nil, errBadDump
		}
		val, err := r.str()
		if err != nil {
			return nil, err
		}
		if err := loadItemSafely(il, item, val); err != nil {
			return nil, err
		}
	}
}

// nativeExcluded: the Redis types never travel as module values (their
// records are not what a RESTORE of Redis's encodings builds).
func (t Type) nativeExcluded() bool {
	switch t {
	case TypeString, TypeList, TypeSet, TypeZSet, TypeHash:
		return true
	}
	return false
}

// decodeSafely and loadItemSafely run a family's record decoders on bytes
// that came from a client: the decoders were written for the server's own
// records, so a panic on a forged record is turned into an error.
func decodeSafely(dec func([]byte) (Object, error), payload []byte) (obj Object, err error) {
	defer func() {
		if p := recover(); p != nil {
			obj, err = nil, fmt.Errorf("%w: %v", errBadDump, p)
		}
	}()
	return dec(payload)
}

func loadItemSafely(il itemLoader, item, val []byte) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%w: %v", errBadDump, p)
		}
	}()
	return il.loadItem(item, val)
}
