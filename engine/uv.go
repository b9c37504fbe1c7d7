package engine

import (
	"encoding/binary"
	"fmt"
)

// UV is a unique counter ("N people watched"): it counts distinct members
// exactly, keeping them in a set, until there are more than uv-exact-max of
// them; then it turns into a dense HyperLogLog fed by the same hash as
// PFADD and forgets the members. An approximate counter never reports less
// than the exact count it had when it converted, so a count never goes down
// at the conversion.
//
// Persistence: while exact, a value record (format, mode) plus one item
// record per member, so an addition writes one small record; once
// approximate, one value record holding the floor and the sketch.
type UV struct {
	objHeader
	members *Dict[struct{}] // the exact form; nil once approximate
	// blob is the approximate form's value record payload: format, mode,
	// floor (8 bytes, little-endian), then a dense sketch in Redis's
	// format, whose header caches the estimate.
	blob []byte
	lim  *Limits
}

const (
	uvFormat    = 1
	uvModeExact = 0
	uvModeHLL   = 1
	uvBlobHead  = 2 + 8
)

func newUV(lim *Limits) *UV { return &UV{members: NewDict[struct{}](), lim: lim} }

// Type implements Object.
func (u *UV) Type() Type { return TypeUV }

// Encoding implements Object: "exact" or "hyperloglog".
func (u *UV) Encoding() string {
	if u.members != nil {
		return "exact"
	}
	return "hyperloglog"
}

// Exact reports whether the counter still counts exactly.
func (u *UV) Exact() bool { return u.members != nil }

func (u *UV) sketch() []byte { return u.blob[uvBlobHead:] }

func (u *UV) floor() int64 { return int64(binary.LittleEndian.Uint64(u.blob[2:uvBlobHead])) }

// Count is the number of distinct members: exact, or the HyperLogLog
// estimate (never below the floor), cached until the next change.
func (u *UV) Count() int64 {
	if u.members != nil {
		return int64(u.members.Len())
	}
	sk := u.sketch()
	var card uint64
	if hllCacheValid(sk) {
		card = hllCached(sk)
	} else {
		card, _ = hllCount(sk)
		hllSetCache(sk, card)
	}
	return max(int64(card), u.floor())
}

// lowerBound is a count the true number of members is known to reach.
func (u *UV) lowerBound() int64 {
	if u.members != nil {
		return int64(u.members.Len())
	}
	return u.floor()
}

// Clone implements Object.
func (u *UV) Clone() Object {
	c := &UV{lim: u.lim}
	if u.members == nil {
		c.blob = append([]byte(nil), u.blob...)
		return c
	}
	c.members = NewDict[struct{}]()
	u.members.ForEach(func(m string, _ *struct{}) bool {
		c.members.Insert(m)
		return true
	})
	return c
}

// MemoryUsage implements Object.
func (u *UV) MemoryUsage() int {
	const header = 64
	if u.members == nil {
		return header + roundAlloc(cap(u.blob))
	}
	b0, b1 := u.members.Buckets()
	size := header + 8*(b0+b1)
	sampled, bytes := 0, 0
	u.members.ForEach(func(m string, _ *struct{}) bool {
		bytes += 48
		if len(m) > dictShortKey {
			bytes += roundAlloc(len(m))
		}
		sampled++
		return sampled < 1024
	})
	if sampled > 0 {
		size += bytes / sampled * u.members.Len()
	}
	return size
}

func (u *UV) persist(sink ChangeSink, db int, key []byte) {
	if u.members == nil {
		sink.PutValue(db, key, TypeUV, u.blob)
		return
	}
	sink.PutValue(db, key, TypeUV, []byte{uvFormat, uvModeExact})
	u.members.ForEach(func(m string, _ *struct{}) bool {
		sink.PutItem(db, key, hsBytes(m), nil)
		return true
	})
}

func (u *UV) hasItems() bool { return u.members != nil }

func (u *UV) loadLimits(l *Limits) { u.lim = l }

func (u *UV) loadItem(member, _ []byte) error {
	if u.members == nil {
		return fmt.Errorf("member record for an approximate unique counter")
	}
	u.members.Insert(str(member))
	return nil
}

func init() {
	registerDecoder(TypeUV, func(payload []byte) (Object, error) {
		if len(payload) < 2 || payload[0] != uvFormat {
			return nil, fmt.Errorf("unknown unique counter record format")
		}
		switch payload[1] {
		case uvModeExact:
			if len(payload) != 2 {
				return nil, fmt.Errorf("exact unique counter record of %d bytes", len(payload))
			}
			return &UV{members: NewDict[struct{}]()}, nil
		case uvModeHLL:
			if len(payload) != uvBlobHead+hllDenseLen || !isHLL(payload[uvBlobHead:]) ||
				payload[uvBlobHead+4] != hllEncDense {
				return nil, fmt.Errorf("approximate unique counter record of %d bytes is not a dense sketch", len(payload))
			}
			return &UV{blob: append([]byte(nil), payload...)}, nil
		}
		return nil, fmt.Errorf("unknown unique counter mode %d", payload[1])
	})
}

// overLimit reports whether the exact form holds more members than
// uv-exact-max allows.
func (u *UV) overLimit() bool {
	return u.members != nil && int64(u.members.Len()) > u.lim.UVExactMax
}

// toApprox replaces the members by a sketch of them; the floor is their
// number.
func (u *UV) toApprox() {
	u.blob = newUVBlob(int64(u.members.Len()))
	regs := u.sketch()[hllHeaderLen:]
	u.members.ForEach(func(m string, _ *struct{}) bool {
		i, c := hllPatLen(hsBytes(m))
		denseRaise(regs, i, c)
		return true
	})
	hllInvalidate(u.sketch())
	u.members = nil
}

func newUVBlob(floor int64) []byte {
	b := make([]byte, uvBlobHead, uvBlobHead+hllDenseLen)
	b[0], b[1] = uvFormat, uvModeHLL
	binary.LittleEndian.PutUint64(b[2:], uint64(floor))
	return append(b, newDenseHLL()...)
}

// mergeInto raises regs to the counter's registers (an exact counter's
// members are hashed as PFADD would).
func (u *UV) mergeInto(regs *hllRegs) {
	if u.members == nil {
		denseMergeMax(u.sketch()[hllHeaderLen:], regs)
		return
	}
	u.members.ForEach(func(m string, _ *struct{}) bool {
		i, c := hllPatLen(hsBytes(m))
		if c > regs[i] {
			regs[i] = c
		}
		return true
	})
}

// uvAt looks key up as a unique counter; nil when absent.
func (db *DB) uvAt(key []byte, read bool) (*UV, error) {
	return lookupAs[*UV](db, key, read)
}

// rewriteUV persists a counter that changed form: its old records go, the
// new ones (and the key's deadline, which went with them) are written.
func (db *DB) rewriteUV(key []byte, u *UV) {
	db.e.sink.DeleteKey(db.id, key, true)
	u.persist(db.e.sink, db.id, key)
	if r := db.keys.recs.Get(key); r != nil && r.HasExpire() {
		db.e.sink.PutExpire(db.id, key, r.Expire())
	}
}

// UVAdd is UV.ADD: it adds members to the counter at key (created when
// absent) and reports whether the count may have changed: a new member
// while exact, a changed register once approximate, or a new key.
func (db *DB) UVAdd(key []byte, members [][]byte) (bool, error) {
	u, err := db.uvAt(key, false)
	if err != nil {
		return false, err
	}
	if u == nil {
		u = newUV(&db.e.limits)
		for _, m := range members {
			u.members.Insert(str(m))
		}
		if u.overLimit() {
			u.toApprox()
		}
		db.Set(key, u, false)
		return true, nil
	}
	changed := false
	if u.members == nil {
		regs := u.sketch()[hllHeaderLen:]
		for _, m := range members {
			i, c := hllPatLen(m)
			if denseRaise(regs, i, c) == 1 {
				changed = true
			}
		}
		if changed {
			hllInvalidate(u.sketch())
			db.e.sink.PutValue(db.id, key, TypeUV, u.blob)
		}
	} else {
		for _, m := range members {
			if _, _, created := u.members.Insert(str(m)); created {
				changed = true
				db.e.sink.PutItem(db.id, key, m, nil)
			}
		}
		if u.overLimit() {
			u.toApprox()
			db.rewriteUV(key, u)
		}
	}
	if changed {
		db.modified(key)
	}
	return changed, nil
}

// UVCount is UV.COUNT: the count of one counter, or of the union of
// several (exact while every one of them is, else estimated from their
// merged registers, never below the largest known count).
func (db *DB) UVCount(keys [][]byte) (int64, error) {
	var us []*UV
	exact := true
	for _, k := range keys {
		u, err := db.uvAt(k, true)
		if err != nil {
			return 0, err
		}
		if u != nil {
			us = append(us, u)
			exact = exact && u.members != nil
		}
	}
	return uvUnionCount(us, exact), nil
}

// uvUnionCount counts the union of counters, exact when every one is
// (exact says so), else estimated from their merged registers, never
// below the largest known count.
func uvUnionCount(us []*UV, exact bool) int64 {
	switch {
	case len(us) == 0:
		return 0
	case len(us) == 1:
		return us[0].Count()
	case exact:
		return exactUnionLen(us)
	}
	var regs hllRegs
	var lower int64
	for _, u := range us {
		u.mergeInto(&regs)
		lower = max(lower, u.lowerBound())
	}
	var h hllHisto
	rawHisto(&regs, &h)
	return max(int64(hllEstimate(&h)), lower)
}

// exactUnionLen counts the distinct members of exact counters: the
// largest one plus what the others add to it.
func exactUnionLen(us []*UV) int64 {
	big := us[0]
	for _, u := range us[1:] {
		if u.members.Len() > big.members.Len() {
			big = u
		}
	}
	n := int64(big.members.Len())
	seen := map[string]struct{}{}
	for _, u := range us {
		if u == big {
			continue
		}
		u.members.ForEach(func(m string, _ *struct{}) bool {
			if !big.members.Has(m) {
				if _, dup := seen[m]; !dup {
					seen[m] = struct{}{}
					n++
				}
			}
			return true
		})
	}
	return n
}

// UVMerge is UV.MERGE: the union of keys[1:] and the destination keys[0]
// itself is stored in the destination (created when absent, its deadline
// kept). The result is exact while every input is and the union fits
// uv-exact-max.
func (db *DB) UVMerge(keys [][]byte) error {
	var us []*UV
	exact := true
	for _, k := range keys {
		u, err := db.uvAt(k, true)
		if err != nil {
			return err
		}
		if u != nil {
			us = append(us, u)
			exact = exact && u.members != nil
		}
	}
	dest := keys[0]
	d, err := db.uvAt(dest, false)
	if err != nil {
		return err
	}
	created := d == nil
	if created {
		d = newUV(&db.e.limits)
	}
	if exact {
		seen := map[*UV]bool{d: true}
		for _, u := range us {
			if seen[u] {
				continue
			}
			seen[u] = true
			u.members.ForEach(func(m string, _ *struct{}) bool {
				if _, _, added := d.members.Insert(m); added && !created {
					db.e.sink.PutItem(db.id, dest, hsBytes(m), nil)
				}
				return true
			})
		}
		if d.overLimit() {
			d.toApprox()
			if !created {
				db.rewriteUV(dest, d)
			}
		}
	} else {
		var regs hllRegs
		var lower int64
		for _, u := range us {
			u.mergeInto(&regs)
			lower = max(lower, u.lowerBound())
		}
		wasExact := d.members != nil
		if wasExact {
			d.blob = newUVBlob(0)
			d.members = nil
		}
		binary.LittleEndian.PutUint64(d.blob[2:uvBlobHead], uint64(lower))
		sk := d.sketch()
		densePack(sk[hllHeaderLen:], &regs)
		hllInvalidate(sk)
		switch {
		case created:
		case wasExact:
			db.rewriteUV(dest, d)
		default:
			db.e.sink.PutValue(db.id, dest, TypeUV, d.blob)
		}
	}
	if created {
		db.Set(dest, d, false)
	} else {
		db.modified(dest)
	}
	return nil
}
