package engine

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
)

// Set is a set value. Like Redis 7.0 it has two forms: while every member
// is an integer (Redis's string2ll rules) and there are at most
// set-max-intset-entries of them, it is a sorted slice of int64 (Redis's
// intset: members iterate in numeric order); the first other member, or one
// member too many, makes it a Dict (Redis's hashtable) for good. 7.0 has no
// listpack sets.
type Set struct {
	objHeader
	ints []int64         // the intset form, sorted; used while dict is nil
	dict *Dict[struct{}] // the hashtable form
	lim  *Limits         // the engine's thresholds (they change with CONFIG SET)
}

// setFormat is the payload of a set's value record; members are item
// records with empty values. As in Redis, a loaded set derives its encoding
// from its members and the thresholds in force.
const setFormat = 1

// newSetFor returns an empty set in the form Redis creates for a set whose
// first member is first: an intset when it is an integer.
func newSetFor(first []byte, lim *Limits) *Set {
	s := &Set{lim: lim}
	if _, ok := ParseInt(first); !ok {
		s.dict = NewDict[struct{}]()
	}
	return s
}

// maxIntset is set-max-intset-entries, capped as Redis caps it.
func (s *Set) maxIntset() int64 {
	return min(s.lim.SetMaxIntsetEntries, 1<<30)
}

// Type implements Object.
func (s *Set) Type() Type { return TypeSet }

// Encoding implements Object.
func (s *Set) Encoding() string {
	if s.dict != nil {
		return "hashtable"
	}
	return "intset"
}

// Len is the number of members.
func (s *Set) Len() int {
	if s.dict != nil {
		return s.dict.Len()
	}
	return len(s.ints)
}

// Has reports whether member is in the set.
func (s *Set) Has(member []byte) bool {
	if s.dict != nil {
		return s.dict.Has(str(member))
	}
	v, ok := ParseInt(member)
	if !ok {
		return false
	}
	_, found := slices.BinarySearch(s.ints, v)
	return found
}

// Each calls fn for every member (intset: ascending). The slice is only
// valid during the call.
func (s *Set) Each(fn func(member []byte)) {
	if s.dict != nil {
		s.dict.ForEach(func(k string, _ *struct{}) bool {
			fn(hsBytes(k))
			return true
		})
		return
	}
	var buf [20]byte
	for _, v := range s.ints {
		fn(strconv.AppendInt(buf[:0], v, 10))
	}
}

// Scan continues an SSCAN from cursor and returns the next cursor: an
// intset answers everything at once with cursor 0, as in Redis; a
// hashtable is scanned bucket by bucket until count members were visited
// (at most count*10 buckets).
func (s *Set) Scan(cursor uint64, count int, fn func(member []byte)) uint64 {
	if s.dict == nil {
		s.Each(fn)
		return 0
	}
	visited := 0
	cb := func(k string, _ *struct{}) {
		visited++
		fn(hsBytes(k))
	}
	return hsScanDict(s.dict, cursor, count, count*10, &visited, cb)
}

// Random returns a random member (the set is not empty), formatting an
// intset member into buf.
func (s *Set) Random(buf []byte) []byte {
	if s.dict != nil {
		k, _ := s.dict.RandomKey()
		return hsBytes(k)
	}
	return strconv.AppendInt(buf[:0], s.ints[rand.IntN(len(s.ints))], 10)
}

// RandomRepeat calls fn count times with a random member each time
// (SRANDMEMBER with a negative count).
func (s *Set) RandomRepeat(count int64, fn func(member []byte)) {
	var buf [20]byte
	for ; count > 0; count-- {
		fn(s.Random(buf[:0]))
	}
}

// RandomDistinct calls fn for count distinct random members, count being
// less than Len (SRANDMEMBER with a positive count; a larger count is the
// whole set, which Each serves in order as Redis does).
func (s *Set) RandomDistinct(count int, fn func(member []byte)) {
	if s.dict == nil {
		var buf [20]byte
		hsPickDistinct(len(s.ints), count, func(i int) { fn(strconv.AppendInt(buf[:0], s.ints[i], 10)) })
		return
	}
	if count*3 > s.dict.Len() {
		keys := make([]string, 0, s.dict.Len())
		s.dict.ForEach(func(k string, _ *struct{}) bool {
			keys = append(keys, k)
			return true
		})
		hsPickDistinct(len(keys), count, func(i int) { fn(hsBytes(keys[i])) })
		return
	}
	seen := make(map[string]struct{}, count)
	for len(seen) < count {
		k, _ := s.dict.RandomKey()
		if _, dup := seen[k]; dup {
			continue
		}
		seen[k] = struct{}{}
		fn(hsBytes(k))
	}
}

// add inserts member, converting to the hashtable form when it is not an
// integer or the intset grows past its threshold; false when present.
func (s *Set) add(member []byte) bool {
	if s.dict == nil {
		v, ok := ParseInt(member)
		if ok {
			i, found := slices.BinarySearch(s.ints, v)
			if found {
				return false
			}
			s.ints = slices.Insert(s.ints, i, v)
			if int64(len(s.ints)) > s.maxIntset() {
				s.convert()
			}
			return true
		}
		s.convert()
	}
	_, _, created := s.dict.Insert(str(member))
	return created
}

func (s *Set) remove(member []byte) bool {
	if s.dict != nil {
		_, ok := s.dict.Delete(str(member))
		return ok
	}
	v, ok := ParseInt(member)
	if !ok {
		return false
	}
	i, found := slices.BinarySearch(s.ints, v)
	if !found {
		return false
	}
	s.ints = slices.Delete(s.ints, i, i+1)
	return true
}

// convert moves an intset to the hashtable form.
func (s *Set) convert() {
	d := NewDict[struct{}]()
	var buf [20]byte
	for _, v := range s.ints {
		d.Insert(str(strconv.AppendInt(buf[:0], v, 10)))
	}
	s.dict = d
	s.ints = nil
}

// allInts reports whether every member is an integer and the members
// would fit an intset: the form Redis gives a set built afresh from them.
func (s *Set) allInts() bool {
	if s.dict == nil {
		return true
	}
	if int64(s.dict.Len()) > s.maxIntset() {
		return false
	}
	ok := true
	s.dict.ForEach(func(k string, _ *struct{}) bool {
		_, ok = ParseInt(hsBytes(k))
		return ok
	})
	return ok
}

// eachRebuilt iterates the members in the order of a set rebuilt from
// them, which is the order Redis replies in when it answers with a copy
// (SPOP of the whole set, SUNION): ascending when that copy is an intset.
func (s *Set) eachRebuilt(fn func(member []byte)) {
	if s.dict == nil || !s.allInts() {
		s.Each(fn)
		return
	}
	ints := make([]int64, 0, s.dict.Len())
	s.dict.ForEach(func(k string, _ *struct{}) bool {
		v, _ := ParseInt(hsBytes(k))
		ints = append(ints, v)
		return true
	})
	slices.Sort(ints)
	var buf [20]byte
	for _, v := range ints {
		fn(strconv.AppendInt(buf[:0], v, 10))
	}
}

// forEachMember and hasMember let the sorted-set algebra (ZUNION and
// friends accept plain sets) read a set; members stay valid after the call.
func (s *Set) forEachMember(fn func(member string) bool) {
	if s.dict != nil {
		s.dict.ForEach(func(k string, _ *struct{}) bool { return fn(k) })
		return
	}
	for _, v := range s.ints {
		if !fn(strconv.FormatInt(v, 10)) {
			return
		}
	}
}

func (s *Set) hasMember(member string) bool { return s.Has(hsBytes(member)) }

// Clone implements Object; the copy keeps the encoding, as Redis's COPY
// does.
func (s *Set) Clone() Object {
	c := &Set{lim: s.lim}
	if s.dict == nil {
		c.ints = slices.Clone(s.ints)
		return c
	}
	c.dict = NewDict[struct{}]()
	s.dict.ForEach(func(k string, _ *struct{}) bool {
		c.dict.Insert(k)
		return true
	})
	return c
}

// MemoryUsage implements Object.
func (s *Set) MemoryUsage() int {
	const header = 64
	if s.dict == nil {
		return header + roundAlloc(8*cap(s.ints))
	}
	b0, b1 := s.dict.Buckets()
	size := header + 8*(b0+b1)
	sampled, bytes := 0, 0
	s.dict.ForEach(func(k string, _ *struct{}) bool {
		bytes += 48 // the node: links and the key with its inline bytes
		if len(k) > dictShortKey {
			bytes += roundAlloc(len(k))
		}
		sampled++
		return sampled < 1024
	})
	if sampled > 0 {
		size += bytes / sampled * s.dict.Len()
	}
	return size
}

func (s *Set) persist(sink ChangeSink, db int, key []byte) {
	sink.PutValue(db, key, TypeSet, []byte{setFormat})
	s.Each(func(m []byte) { sink.PutItem(db, key, m, nil) })
}

func (s *Set) hasItems() bool { return true }

func (s *Set) loadLimits(l *Limits) { s.lim = l }

// loadItem adds one persisted member; the thresholds decide the encoding
// as they do for writes, so it depends on the contents only.
func (s *Set) loadItem(member, _ []byte) error {
	if s.lim == nil {
		return fmt.Errorf("set loaded without encoding thresholds")
	}
	s.add(member)
	return nil
}

func init() {
	registerDecoder(TypeSet, func(payload []byte) (Object, error) {
		if len(payload) != 1 || payload[0] != setFormat {
			return nil, fmt.Errorf("unknown set record format %x", payload)
		}
		// Every set starts as an intset; the first member that is not an
		// integer converts it, as Redis's loader does.
		return &Set{}, nil
	})
}

// setAt looks key up as a set (a read lookup when read is set, else a
// write lookup); nil when absent.
func (db *DB) setAt(key []byte, read bool) (*Set, error) {
	return lookupAs[*Set](db, key, read)
}

// ReadSet looks key up for a read command (SISMEMBER, SMEMBERS, SSCAN,
// SRANDMEMBER, ...): nil when absent, ErrWrongType for another type. The
// set must not be kept past the engine lock.
func (db *DB) ReadSet(key []byte) (*Set, error) { return db.setAt(key, true) }

// newSetAt stores s under key (absent, as a write lookup just found) and
// persists its value record and members.
func (db *DB) newSetAt(key []byte, s *Set) {
	db.Set(key, s, false)
}

// SAdd is SADD: it returns the number of members added, each written as
// one item record.
func (db *DB) SAdd(key []byte, members [][]byte) (int, error) {
	s, err := db.setAt(key, false)
	if err != nil {
		return 0, err
	}
	if s == nil {
		s = newSetFor(members[0], &db.e.limits)
		db.newSetAt(key, s)
	}
	added := 0
	for _, m := range members {
		if s.add(m) {
			added++
			db.e.sink.PutItem(db.id, key, m, nil)
		}
	}
	if added > 0 {
		db.modified(key)
	}
	return added, nil
}

// SRem is SREM: it returns the number of members removed and whether the
// set became empty and the key was deleted.
func (db *DB) SRem(key []byte, members [][]byte) (n int, keyRemoved bool, err error) {
	s, err := db.setAt(key, false)
	if s == nil {
		return 0, false, err
	}
	for _, m := range members {
		if !s.remove(m) {
			continue
		}
		n++
		if s.Len() == 0 {
			db.Delete(key)
			return n, true, nil
		}
		db.e.sink.DeleteItem(db.id, key, m)
	}
	if n > 0 {
		db.modified(key)
	}
	return n, false, nil
}

// SPop is SPOP without a count: it removes and returns a random member
// (nil when the key is absent) and reports whether the set became empty
// and the key was deleted.
func (db *DB) SPop(key []byte) (member []byte, keyRemoved bool, err error) {
	s, err := db.setAt(key, false)
	if s == nil {
		return nil, false, err
	}
	member = append([]byte{}, s.Random(nil)...) // never nil, even for "": nil means no key
	s.remove(member)
	if s.Len() == 0 {
		db.Delete(key)
		return member, true, nil
	}
	db.e.sink.DeleteItem(db.id, key, member)
	db.modified(key)
	return member, false, nil
}

// SPopResult is what SPOP with a count did.
type SPopResult struct {
	Found      bool     // the key existed
	Members    [][]byte // the popped members, in reply order
	KeyRemoved bool     // the whole set was popped and the key deleted
}

// SPopCount is SPOP with a count. Popping at least the whole set answers
// in the order of a rebuilt copy and deletes the key; popping most of a set
// keeps a rebuilt set of the survivors, whose encoding is derived afresh
// (Redis's third case: a hashtable left with a few integers becomes an
// intset). Each popped member is one item delete.
func (db *DB) SPopCount(key []byte, count int64) (SPopResult, error) {
	var r SPopResult
	s, err := db.setAt(key, false)
	if s == nil {
		return r, err
	}
	r.Found = true
	if count == 0 {
		return r, nil
	}
	size := int64(s.Len())
	if count >= size {
		var arena []byte
		s.eachRebuilt(func(m []byte) { r.Members, arena = hsAppendMember(r.Members, arena, m) })
		db.removeRaw(key)
		r.KeyRemoved = true
		return r, nil
	}
	remaining := size - count
	var arena []byte
	if remaining*5 > count {
		var buf [20]byte
		for ; count > 0; count-- {
			m := s.Random(buf[:0])
			r.Members, arena = hsAppendMember(r.Members, arena, m)
			s.remove(r.Members[len(r.Members)-1])
		}
	} else {
		var kept *Set
		var buf [20]byte
		for ; remaining > 0; remaining-- {
			m := s.Random(buf[:0])
			if kept == nil {
				kept = newSetFor(m, s.lim)
			}
			kept.add(m)
			s.remove(m)
		}
		s.Each(func(m []byte) { r.Members, arena = hsAppendMember(r.Members, arena, m) })
		db.replaceObject(key, db.findRec(key), kept)
	}
	for _, m := range r.Members {
		db.e.sink.DeleteItem(db.id, key, m)
	}
	db.modified(key)
	return r, nil
}

// hsAppendMember appends a copy of m to list, carving it from arena so that
// many short members cost few allocations. Earlier members stay valid when
// arena grows: they keep the old array alive.
func hsAppendMember(list [][]byte, arena, m []byte) ([][]byte, []byte) {
	if cap(arena)-len(arena) < len(m) {
		arena = make([]byte, 0, max(4096, len(m)))
	}
	start := len(arena)
	arena = append(arena, m...)
	return append(list, arena[start:len(arena):len(arena)]), arena
}

// SMove is SMOVE. It publishes its own keyspace events (srem and perhaps
// del on the source, then sadd on the destination) because the
// destination may be created in between, and Redis announces that
// creation ("new") after the source's events.
func (db *DB) SMove(src, dst, member []byte) (bool, error) {
	srcObj, dstObj := db.Write(src), db.Write(dst)
	if srcObj == nil {
		return false, nil
	}
	from, ok := srcObj.(*Set)
	if !ok {
		return false, ErrWrongType
	}
	to, ok := dstObj.(*Set)
	if dstObj != nil && !ok {
		return false, ErrWrongType
	}
	if string(src) == string(dst) {
		return from.Has(member), nil
	}
	if !from.remove(member) {
		return false, nil
	}
	db.e.notify(NotifySet, "srem", db.id, src)
	if from.Len() == 0 {
		db.removeRaw(src)
		db.e.notify(NotifyGeneric, "del", db.id, src)
	} else {
		db.e.sink.DeleteItem(db.id, src, member)
		db.modified(src)
	}
	if to == nil {
		to = newSetFor(member, &db.e.limits)
		db.newSetAt(dst, to)
	}
	if to.add(member) {
		db.e.sink.PutItem(db.id, dst, member, nil)
		db.modified(dst)
		db.e.notify(NotifySet, "sadd", db.id, dst)
	}
	return true, nil
}

// readSets looks up the source keys of SINTER/SUNION/SDIFF and their
// STORE forms in order: nil for an absent key, ErrWrongType at the first
// key of another type.
func (db *DB) readSets(keys [][]byte) ([]*Set, error) {
	sets := make([]*Set, len(keys))
	for i, k := range keys {
		s, err := db.setAt(k, true)
		if err != nil {
			return nil, err
		}
		sets[i] = s
	}
	return sets, nil
}

// setInterEach calls fn for every member of the intersection of sets (none
// nil), iterating the smallest, until fn returns false.
func setInterEach(sets []*Set, fn func(member []byte) bool) {
	sorted := slices.Clone(sets)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Len() < sorted[j].Len() })
	first := sorted[0]
	stop := false
	first.Each(func(m []byte) {
		if stop {
			return
		}
		for _, o := range sorted[1:] {
			if o != first && !o.Has(m) {
				return
			}
		}
		stop = !fn(m)
	})
}

// SInter is SINTER (and SMEMBERS, which is SINTER of one key): the members
// of the intersection in the order of the smallest set, copied.
func (db *DB) SInter(keys [][]byte) ([][]byte, error) {
	sets, err := db.readSets(keys)
	if err != nil || slices.Contains(sets, nil) {
		return nil, err
	}
	var out [][]byte
	var arena []byte
	setInterEach(sets, func(m []byte) bool {
		out, arena = hsAppendMember(out, arena, m)
		return true
	})
	return out, nil
}

// SInterCard is SINTERCARD: the size of the intersection, counting stops at
// limit when limit > 0.
func (db *DB) SInterCard(keys [][]byte, limit int64) (int64, error) {
	sets, err := db.readSets(keys)
	if err != nil || slices.Contains(sets, nil) {
		return 0, err
	}
	var n int64
	setInterEach(sets, func([]byte) bool {
		n++
		return limit == 0 || n < limit
	})
	return n, nil
}

// SInterStore is SINTERSTORE: see storeSet for the result.
func (db *DB) SInterStore(dst []byte, keys [][]byte) (n int, deleted bool, err error) {
	sets, err := db.readSets(keys)
	if err != nil {
		return 0, false, err
	}
	res := &Set{lim: &db.e.limits}
	if !slices.Contains(sets, nil) {
		setInterEach(sets, func(m []byte) bool {
			res.add(m)
			return true
		})
	}
	n, deleted = db.storeSet(dst, res)
	return n, deleted, nil
}

// storeSet makes res the value of dst, replacing a key of any type and its
// deadline, or deletes dst when res is empty. It returns the size stored
// and whether an empty result deleted an existing key.
func (db *DB) storeSet(dst []byte, res *Set) (int, bool) {
	if res.Len() == 0 {
		return 0, db.removeRaw(dst)
	}
	db.Set(dst, res, false)
	return res.Len(), false
}

// SUnionDiff is SUNION (diff unset) or SDIFF: the result as a new set,
// built as Redis builds it (an intset until a member says otherwise), so
// iterating it gives Redis's reply order for small integer results.
func (db *DB) SUnionDiff(keys [][]byte, diff bool) (*Set, error) {
	sets, err := db.readSets(keys)
	if err != nil {
		return nil, err
	}
	res := &Set{lim: &db.e.limits}
	if !diff {
		for _, s := range sets {
			if s != nil {
				s.Each(func(m []byte) { res.add(m) })
			}
		}
		return res, nil
	}
	first := sets[0]
	if first == nil {
		return res, nil
	}
	first.Each(func(m []byte) {
		for _, o := range sets[1:] {
			if o != nil && (o == first || o.Has(m)) {
				return
			}
		}
		res.add(m)
	})
	return res, nil
}

// SUnionDiffStore is SUNIONSTORE or SDIFFSTORE: see storeSet.
func (db *DB) SUnionDiffStore(dst []byte, keys [][]byte, diff bool) (n int, deleted bool, err error) {
	res, err := db.SUnionDiff(keys, diff)
	if err != nil {
		return 0, false, err
	}
	n, deleted = db.storeSet(dst, res)
	return n, deleted, nil
}
