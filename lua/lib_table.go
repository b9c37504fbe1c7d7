package lua

import (
	"strings"
)

// The table library of Lua 5.1 (ltablib.c), with its algorithms kept
// step for step: which elements it reads and writes, and in what order,
// is visible through comparators, read-only tables and tables with holes.
// Writes go through L.RawSetInt, which refuses read-only tables.

// openTable registers the table library in ltablib.c's order.
func openTable(L *State) *Table {
	return L.register("table", []LibFunc{
		{"concat", tableConcat},
		{"foreach", tableForeach},
		{"foreachi", tableForeachi},
		{"getn", tableGetn},
		{"maxn", tableMaxn},
		{"insert", tableInsert},
		{"remove", tableRemove},
		{"setn", tableSetn},
		{"sort", tableSort},
	})
}

// checkTableLen returns argument n, a table, and its length (aux_getn).
func (L *State) checkTableLen(n int) (*Table, int) {
	L.CheckType(n, TypeTable)
	t := L.Get(n).AsTable()
	return t, t.Len()
}

func tableConcat(L *State) int {
	sep := L.OptString(2, "")
	L.CheckType(1, TypeTable)
	t := L.Get(1).AsTable()
	i := L.OptInt(3, 1)
	last := 0
	if L.Get(4).IsNil() {
		last = t.Len()
	} else {
		last = L.CheckInt(4)
	}
	var b strings.Builder
	for ; i < last; i++ {
		b.WriteString(L.concatField(t, i))
		b.WriteString(sep)
	}
	if i == last {
		b.WriteString(L.concatField(t, i))
	}
	L.Push(String(b.String()))
	return 1
}

// concatField is t[i] as concat adds it: a string, or a number written
// as Lua writes numbers.
func (L *State) concatField(t *Table, i int) string {
	v := t.GetInt(i)
	s, ok := v.ToString()
	if !ok {
		L.Errorf("invalid value (%s) at index %d in table for 'concat'", v.TypeName(), i)
	}
	return s
}

// tableForeach calls f(k, v) for each entry in next's order and returns
// the first non-nil result.
func tableForeach(L *State) int {
	L.CheckType(1, TypeTable)
	L.CheckType(2, TypeFunction)
	t, f := L.Get(1).AsTable(), L.Get(2)
	k := Nil
	for {
		key, val, ok := t.Next(k)
		if !ok {
			L.Error(String("invalid key to 'next'"))
		}
		if key.IsNil() {
			return 0
		}
		if r := L.Call(f, []Value{key, val}, 1)[0]; !r.IsNil() {
			L.Push(r)
			return 1
		}
		k = key
	}
}

// tableForeachi calls f(i, t[i]) for i from 1 to #t (taken before the
// first call) and returns the first non-nil result.
func tableForeachi(L *State) int {
	t, n := L.checkTableLen(1)
	L.CheckType(2, TypeFunction)
	f := L.Get(2)
	for i := 1; i <= n; i++ {
		if r := L.Call(f, []Value{Number(float64(i)), t.GetInt(i)}, 1)[0]; !r.IsNil() {
			L.Push(r)
			return 1
		}
	}
	return 0
}

func tableGetn(L *State) int {
	_, n := L.checkTableLen(1)
	L.Push(Number(float64(n)))
	return 1
}

// tableMaxn is the largest positive number among t's keys, or 0.
func tableMaxn(L *State) int {
	t := L.CheckTable(1)
	max := 0.0
	t.ForEach(func(k, _ Value) {
		if f, ok := k.AsNumber(); ok && f > max {
			max = f
		}
	})
	L.Push(Number(max))
	return 1
}

// tableInsert is insert(t, v), appending, or insert(t, pos, v), moving
// t[pos..#t] up one; a pos past the end moves nothing.
func tableInsert(L *State) int {
	t, n := L.checkTableLen(1)
	e := n + 1
	pos := 0
	switch L.Top() {
	case 2:
		pos = e
	case 3:
		pos = L.CheckInt(2)
		if pos > e {
			e = pos
		}
		for i := e; i > pos; i-- {
			L.RawSetInt(t, i, t.GetInt(i-1))
		}
	default:
		L.Errorf("wrong number of arguments to 'insert'")
	}
	L.RawSetInt(t, pos, L.Get(L.Top()))
	return 0
}

// tableRemove removes and returns t[pos] (default #t), moving the
// elements above it down; a pos outside 1..#t returns nothing.
func tableRemove(L *State) int {
	t, e := L.checkTableLen(1)
	pos := L.OptInt(2, e)
	if pos < 1 || pos > e {
		return 0
	}
	removed := t.GetInt(pos)
	for ; pos < e; pos++ {
		L.RawSetInt(t, pos, t.GetInt(pos+1))
	}
	L.RawSetInt(t, e, Nil)
	L.Push(removed)
	return 1
}

func tableSetn(L *State) int {
	L.CheckType(1, TypeTable)
	L.Errorf("'setn' is obsolete")
	return 0
}

func tableSort(L *State) int {
	t, n := L.checkTableLen(1)
	if !L.Get(2).IsNil() {
		L.CheckType(2, TypeFunction)
	}
	s := sorter{L: L, t: t, cmp: L.Get(2)}
	s.sort(1, n)
	return 0
}

// sorter is Lua 5.1's auxsort: a quicksort on the median of three, that
// compares and swaps exactly as Lua does, so that an inconsistent
// comparator has the same effect (or the same error).
type sorter struct {
	L   *State
	t   *Table
	cmp Value // the comparator, or nil for <
}

func (s *sorter) less(a, b Value) bool {
	if s.cmp.IsNil() {
		return s.L.LessThan(a, b)
	}
	return s.L.Call(s.cmp, []Value{a, b}, 1)[0].Truthy()
}

func (s *sorter) get(i int) Value { return s.t.GetInt(i) }

func (s *sorter) set(i int, v Value) { s.L.RawSetInt(s.t, i, v) }

// sort sorts a[lo..up]. Values are held as Lua holds them on its stack:
// what is written back is what was read, even if a comparator changed
// the table in between.
func (s *sorter) sort(lo, up int) {
	for lo < up {
		// Order a[lo], a[mid] and a[up].
		alo, aup := s.get(lo), s.get(up)
		if s.less(aup, alo) {
			s.set(lo, aup)
			s.set(up, alo)
		}
		if up-lo == 1 {
			return
		}
		mid := (lo + up) / 2
		amid, alo := s.get(mid), s.get(lo)
		if s.less(amid, alo) {
			s.set(mid, alo)
			s.set(lo, amid)
		} else if aup := s.get(up); s.less(aup, amid) {
			s.set(mid, aup)
			s.set(up, amid)
		}
		if up-lo == 2 {
			return
		}
		// The pivot goes to a[up-1]; a[lo] <= P <= a[up] already.
		pivot := s.get(mid)
		s.set(mid, s.get(up-1))
		s.set(up-1, pivot)
		i, j := lo, up-1
		for {
			var ai, aj Value
			for {
				i++
				ai = s.get(i)
				if !s.less(ai, pivot) {
					break
				}
				if i > up {
					s.L.Errorf("invalid order function for sorting")
				}
			}
			for {
				j--
				aj = s.get(j)
				if !s.less(pivot, aj) {
					break
				}
				if j < lo {
					s.L.Errorf("invalid order function for sorting")
				}
			}
			if j < i {
				break
			}
			s.set(i, aj)
			s.set(j, ai)
		}
		// Swap the pivot (a[up-1]) with a[i].
		aup1, ai := s.get(up-1), s.get(i)
		s.set(up-1, ai)
		s.set(i, aup1)
		// Recurse into the smaller part, loop on the larger.
		if i-lo < up-i {
			s.sort(lo, i-1)
			lo = i + 1
		} else {
			s.sort(i+1, up)
			up = i - 1
		}
	}
}
