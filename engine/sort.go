package engine

import (
	"bytes"
	"errors"
	"math"

	"github.com/revolver-db/revolver/libm"
)

// SORT and SORT_RO (Redis's sort.c is the reference for every rule here):
// the elements of a list, set or sorted set are loaded into a vector, given
// a weight (the element itself, or what a BY pattern finds), sorted, cut by
// LIMIT and turned into rows (the element, or what each GET pattern finds).
//
// Where Redis's order depends on its sorting algorithm, this one follows
// it: a full sort is glibc's qsort, a stable merge sort, so ties keep the
// load order; a BY sort with a LIMIT that cuts is Redis's pqsort, a
// Bentley-McIlroy quicksort that skips the partitions outside the range,
// whose order among ties partialQuicksort reproduces (redis_sorts.go).

// ErrSortScore is SORT's reply when a weight is not a number.
var ErrSortScore = errors.New("ERR One or more scores can't be converted into double")

// SortSpec is a parsed SORT command.
type SortSpec struct {
	By []byte // BY pattern; nil when absent
	// NoSort: a BY pattern had no '*' (before its first NUL, as Redis reads
	// it), which names no key per element: nothing is sorted, even if a
	// later BY has one.
	NoSort bool
	Gets   [][]byte // GET patterns, in order
	Offset int64    // LIMIT offset (0 when absent)
	Count  int64    // LIMIT count; -1 for all
	Desc   bool
	Alpha  bool
	// Store: the rows go to a list (STORE). ALPHA then compares bytes
	// instead of collating, and a missing GET becomes an empty string.
	Store bool
	// Script: the caller is a script, so an unsorted set is sorted (its
	// order would otherwise differ between a script and its replicas).
	Script bool
}

// sortScratch is SORT's per-engine scratch space: the key a pattern names,
// built once per lookup.
type sortScratch struct {
	key     []byte
	lastInt bool // the last pattern lookup found a value Redis holds as an integer object
}

var sortState = newFamilyState[sortScratch]()

// sortItem is one element of the vector with its weight.
type sortItem struct {
	elem  []byte
	score float64
	by    []byte // ALPHA BY weight; nil when the lookup found nothing
}

// Sort runs SORT on key and returns its rows: per element, the element
// itself, or with GET patterns one value per pattern (nil where a lookup
// finds nothing; "" instead with Store). The rows alias the database's
// values: use them before the next write. Errors: ErrWrongType for a key
// that is not a list, set or sorted set, ErrSortScore for a weight that is
// not a number.
func (db *DB) Sort(key []byte, spec *SortSpec) ([][]byte, error) {
	obj := db.Read(key)
	switch obj.(type) {
	case nil, *List, *Set, *ZSet:
	default:
		return nil, ErrWrongType
	}
	by, alpha := spec.By, spec.Alpha
	dontSort := spec.NoSort
	if _, isSet := obj.(*Set); isSet && dontSort && (spec.Store || spec.Script) {
		dontSort, alpha, by = false, true, nil
	}
	staleERange := false
	if z, ok := obj.(*ZSet); ok {
		staleERange = z.packedSubnormal()
		z.toSkiplist() // Redis converts a sorted set it sorts, for good
	}
	n := int64(sortLen(obj))
	start, end := sortBounds(spec.Offset, spec.Count, n)

	var vec []sortItem
	switch v := obj.(type) {
	case *List:
		if dontSort {
			vec = loadListRange(v, start, end, spec.Desc)
			end -= start
			start = 0
		} else {
			vec = loadListRange(v, 0, n-1, false)
		}
	case *Set:
		vec = make([]sortItem, 0, v.Len())
		v.Each(func(m []byte) { vec = append(vec, sortItem{elem: bytes.Clone(m)}) })
	case *ZSet:
		if dontSort {
			vec = loadZSetRange(v, start, end, spec.Desc)
			end -= start
			start = 0
		} else {
			vec = loadZSetRange(v, 0, n-1, false)
		}
	}

	at := func(i int64) *sortItem { return &vec[i] }
	if !dontSort {
		if !db.weighSortItems(vec, by, alpha, staleERange) {
			return nil, ErrSortScore
		}
		// Sort positions, not the items: moving items that hold pointers
		// costs a write barrier each.
		order := make([]int, len(vec))
		for i := range order {
			order[i] = i
		}
		itemCmp := sortComparator(alpha, by != nil, spec.Store, spec.Desc)
		cmp := func(a, b *int) int { return itemCmp(&vec[*a], &vec[*b]) }
		if by != nil && (start != 0 || end != int64(len(vec))-1) {
			partialQuicksort(order, cmp, int(start), int(end))
		} else {
			glibcSort(order, cmp)
		}
		at = func(i int64) *sortItem { return &vec[order[i]] }
	}
	if end < start {
		return nil, nil
	}
	rows := make([][]byte, 0, (end-start+1)*int64(max(len(spec.Gets), 1)))
	for i := start; i <= end; i++ {
		it := at(i)
		if len(spec.Gets) == 0 {
			rows = append(rows, orEmpty(it.elem))
			continue
		}
		for _, g := range spec.Gets {
			v := db.lookupSortPattern(g, it.elem)
			if v == nil && spec.Store {
				v = []byte{}
			}
			rows = append(rows, v)
		}
	}
	return rows, nil
}

// weighSortItems gives each item its weight: the element itself or what
// the BY pattern finds for it, as a number unless alpha (the items keep
// score 0, or no ALPHA weight, when the lookup finds nothing). false when a
// numeric weight is not a number; every lookup is made anyway, as in Redis.
//
// staleERange reproduces a Redis quirk: converting a listpack sorted set
// that holds a subnormal score leaves errno at ERANGE, and SORT checks
// errno after each strtod without clearing it, so every weight it parses
// fails. Only a BY value Redis holds as an integer object escapes (it is
// read without strtod): an int-encoded string, or an integer in a listpack
// hash.
func (db *DB) weighSortItems(vec []sortItem, by []byte, alpha, staleERange bool) bool {
	ok := true
	scratch := sortState.of(db.e)
	for i := range vec {
		it := &vec[i]
		w := it.elem
		if by != nil {
			if w = db.lookupSortPattern(by, it.elem); w == nil {
				continue
			}
		}
		if alpha {
			if by != nil {
				it.by = w
			}
			continue
		}
		var good bool
		it.score, good = parseSortWeight(w)
		if staleERange && (by == nil || !scratch.lastInt) {
			good = false
		}
		ok = ok && good
	}
	return ok
}

// SortStore makes rows (SORT ... STORE's result) the list at dst, replacing
// a key of any type and its deadline, and signals clients blocked on it;
// no rows deletes dst instead (deleted reports it existed).
func (db *DB) SortStore(dst []byte, rows [][]byte) (deleted bool) {
	if len(rows) == 0 {
		return db.Delete(dst)
	}
	l := NewList()
	for _, r := range rows {
		l.push(r, false)
	}
	db.Set(dst, l, false)
	db.e.stats.Dirty += int64(len(rows)) - 1 // Redis counts every element stored
	db.signalReady(dst)
	return false
}

func sortLen(obj Object) int {
	switch v := obj.(type) {
	case *List:
		return v.Len()
	case *Set:
		return v.Len()
	case *ZSet:
		return v.Len()
	}
	return 0
}

// sortBounds applies LIMIT as Redis does: offset and count are clamped to
// the length first, so no arithmetic overflows; the rows are start..end,
// none when end < start.
func sortBounds(offset, count, n int64) (start, end int64) {
	start = min(max(offset, 0), n)
	count = min(max(count, -1), n)
	if count < 0 {
		end = n - 1
	} else {
		end = start + count - 1
	}
	if start >= n {
		start, end = n-1, n-2
	}
	if end >= n {
		end = n - 1
	}
	return start, end
}

// loadListRange loads elements start..end of l (counted from the tail with
// desc, walking towards the head).
func loadListRange(l *List, start, end int64, desc bool) []sortItem {
	if end < start {
		return nil
	}
	count := int(end - start + 1)
	vec := make([]sortItem, 0, count)
	from := int(start)
	if desc {
		from = l.Len() - 1 - int(start)
	}
	l.Each(from, count, desc, func(v []byte) { vec = append(vec, sortItem{elem: v}) })
	return vec
}

// loadZSetRange loads the members of ranks start..end (from the highest
// score with desc).
func loadZSetRange(z *ZSet, start, end int64, desc bool) []sortItem {
	if end < start {
		return nil
	}
	count := int(end - start + 1)
	vec := make([]sortItem, 0, count)
	from := int(start)
	if desc {
		from = z.Len() - 1 - int(start)
	}
	z.walk(from, desc, func(it zitem) bool {
		vec = append(vec, sortItem{elem: bytesOf(it.member)})
		return len(vec) < count
	})
	return vec
}

// sortComparator returns Redis's sortCompare for these options.
func sortComparator(alpha, byPattern, store, desc bool) func(a, b *sortItem) int {
	text := cCompare // strcoll, which in the C and C.UTF-8 locales is strcmp
	if store {
		text = bytes.Compare // a stored result must not depend on the locale
	}
	var cmp func(a, b *sortItem) int
	switch {
	case !alpha:
		cmp = func(a, b *sortItem) int {
			switch {
			case a.score > b.score:
				return 1
			case a.score < b.score:
				return -1
			}
			return bytes.Compare(a.elem, b.elem) // equal weights: the elements decide
		}
	case byPattern:
		cmp = func(a, b *sortItem) int {
			switch {
			case a.by == nil && b.by == nil:
				return 0
			case a.by == nil:
				return -1
			case b.by == nil:
				return 1
			}
			return text(a.by, b.by)
		}
	default:
		cmp = func(a, b *sortItem) int { return text(a.elem, b.elem) }
	}
	if desc {
		return func(a, b *sortItem) int { return -cmp(a, b) }
	}
	return cmp
}

// SortPatternHasStar reports whether a BY pattern names a key per element.
func SortPatternHasStar(pat []byte) bool { return bytes.IndexByte(cString(pat), '*') >= 0 }

// cCompare compares a and b as C strings: up to the first NUL.
func cCompare(a, b []byte) int { return bytes.Compare(cString(a), cString(b)) }

// lookupSortPattern is what a BY or GET pattern finds for element subst:
// "#" is the element itself; otherwise the first '*' is replaced by it and
// the key read, as a string or, with "->field" after the '*', as that
// field of a hash. nil when the pattern has no '*', the key is missing or
// of another type, or the field is missing. Redis reads the pattern as a C
// string to find "#", '*' and "->", so a NUL ends that search.
func (db *DB) lookupSortPattern(pat, subst []byte) []byte {
	cpat := cString(pat)
	scratch := sortState.of(db.e)
	scratch.lastInt = false
	if len(cpat) == 1 && cpat[0] == '#' {
		return orEmpty(subst)
	}
	star := bytes.IndexByte(cpat, '*')
	if star < 0 {
		return nil
	}
	keyEnd, field := len(pat), []byte(nil)
	if f := bytes.Index(cpat[star+1:], []byte("->")); f >= 0 {
		if at := star + 1 + f; at+2 < len(cpat) {
			keyEnd, field = at, pat[at+2:]
		}
	}
	// The key is only looked up, never kept: one buffer serves every lookup.
	key := append(append(append(scratch.key[:0], pat[:star]...), subst...), pat[star+1:keyEnd]...)
	scratch.key = key
	obj := db.Read(key)
	if field != nil {
		h, ok := obj.(*Hash)
		if !ok {
			return nil
		}
		if v, found := h.Get(field); found {
			_, isInt := ParseInt(v)
			scratch.lastInt = isInt && h.Encoding() == "listpack"
			return orEmpty(v)
		}
		return nil
	}
	if s, ok := obj.(*String); ok {
		scratch.lastInt = s.Encoding() == "int"
		return orEmpty(s.Bytes())
	}
	return nil
}

// orEmpty makes an empty value non-nil: nil is what a lookup that found
// nothing returns.
func orEmpty(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// parseSortWeight parses a numeric weight as SORT does: strtod on the
// value as a C string, which must consume all of it (an empty value is 0),
// not NaN, and without ERANGE (an overflow, or an underflow glibc reports:
// a result that is zero or subnormal and not exact).
func parseSortWeight(b []byte) (float64, bool) {
	if n, ok := ParseInt(b); ok {
		return float64(n), true // most weights; rounds as strtod does
	}
	b = cString(b)
	f, n, erange := libm.Strtod(b)
	if n != len(b) || math.IsNaN(f) || erange {
		return f, false
	}
	return f, true
}

// packedSubnormal reports a listpack sorted set holding a subnormal score:
// Redis keeps it as text, and reading it back with strtod sets ERANGE.
func (z *ZSet) packedSubnormal() bool {
	found := false
	if z.packed() {
		z.pack.scan(0, 0, func(_, _ int, it zitem) bool {
			found = it.score != 0 && math.Abs(it.score) < 0x1p-1022
			return !found
		})
	}
	return found
}
