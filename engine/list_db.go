package engine

import "errors"

// List commands on a database. Each write persists only what it changed:
// element i of a list is the item record keyed by its position head+i, so
// a push at either end puts one record and a pop deletes one. Edits in the
// middle shift the shorter side and rewrite only the elements that moved;
// when a change would touch more records than rewriting the list (an LTRIM
// that keeps ten elements of a million), the key is rewritten whole.
//
// Replies returned as [][]byte or []byte alias the list's memory (except
// ListMove's, which is a copy): use them before the key is written again.

// ErrIndexRange is LSET's reply for an index outside the list.
var ErrIndexRange = errors.New("ERR index out of range")

// listLookup finds key for a list write: no keyspace statistics, no keymiss
// event, the access time refreshed. The list is nil when the key is absent.
func (db *DB) listLookup(key []byte) (entry, *List, error) {
	en, found := db.find(key)
	if !found {
		return entry{}, nil, nil
	}
	l, ok := en.obj.(*List)
	if !ok {
		return entry{}, nil, ErrWrongType
	}
	db.touch(en.rec)
	return en, l, nil
}

// ListRead looks key up for a read command (LLEN, LRANGE, LINDEX, LPOS).
// nil when absent.
func (db *DB) ListRead(key []byte) (*List, error) {
	obj := db.Read(key)
	if obj == nil {
		return nil, nil
	}
	l, ok := obj.(*List)
	if !ok {
		return nil, ErrWrongType
	}
	return l, nil
}

// ListWrite looks key up as a write command does, for commands that check
// the key before parsing the rest of their arguments (LSET). nil when
// absent.
func (db *DB) ListWrite(key []byte) (*List, error) {
	_, l, err := db.listLookup(key)
	return l, err
}

// listChanged records an in-place change of dirty elements (Redis counts
// each one towards the dirty counter; an LTRIM that removes nothing counts
// none but still invalidates WATCH).
func (db *DB) listChanged(key []byte, dirty int) {
	db.modified(key)
	db.e.stats.Dirty += int64(dirty) - 1
}

func (db *DB) putListItem(key []byte, pos int64, v []byte) {
	k := listPosItem(pos)
	db.e.sink.PutItem(db.id, key, k[:], v)
}

// deleteListItems drops the records of positions [from, to), as one
// range: pops come off the ends, so the positions are always a run.
func (db *DB) deleteListItems(key []byte, from, to int64) {
	if from >= to {
		return
	}
	f, t := listPosItem(from), listPosItem(to)
	db.e.sink.DeleteItemRange(db.id, key, f[:], t[:])
}

// rewriteList persists l whole in place of its records, keeping the key's
// deadline.
func (db *DB) rewriteList(key []byte, en entry, l *List) {
	db.e.sink.DeleteKey(db.id, key, true)
	l.persist(db.e.sink, db.id, key)
	if en.expire != 0 {
		db.e.sink.PutExpire(db.id, key, en.expire)
	}
}

// ListPush is LPUSH/RPUSH (left chooses the head) and, with onlyExisting,
// LPUSHX/RPUSHX. It returns the new length; 0 when onlyExisting found no
// key.
func (db *DB) ListPush(key []byte, vals [][]byte, left, onlyExisting bool) (int, error) {
	_, l, err := db.listLookup(key)
	if err != nil {
		return 0, err
	}
	if l == nil {
		if onlyExisting {
			return 0, nil
		}
		l = NewList()
		for _, v := range vals {
			l.push(v, left)
		}
		db.Set(key, l, false)
		db.e.stats.Dirty += int64(len(vals)) - 1
	} else {
		for _, v := range vals {
			db.putListItem(key, l.push(v, left), v)
		}
		db.listChanged(key, len(vals))
	}
	db.signalReady(key)
	return l.n, nil
}

// ListPop pops up to count elements from the head (left) or the tail, in
// pop order, and deletes the key when it empties (deleted). nil when the
// key is absent.
func (db *DB) ListPop(key []byte, left bool, count int) (vals [][]byte, deleted bool, err error) {
	en, l, err := db.listLookup(key)
	if l == nil || err != nil || count <= 0 {
		return nil, false, err
	}
	count = min(count, l.n)
	vals = make([][]byte, count)
	if count == l.n {
		for i := range vals {
			vals[i] = l.pop(left)
		}
		db.removeRaw(key)
		db.e.stats.Dirty += int64(count) - 1
		return vals, true, nil
	}
	oldHead, oldEnd := l.head, l.head+int64(l.n)
	for i := range vals {
		vals[i] = l.pop(left)
	}
	switch {
	case count > l.n+2:
		db.rewriteList(key, en, l)
	case left:
		db.deleteListItems(key, oldHead, oldHead+int64(count))
	default:
		db.deleteListItems(key, oldEnd-int64(count), oldEnd)
	}
	db.listChanged(key, count)
	return vals, false, nil
}

// ListSet is LSET.
func (db *DB) ListSet(key []byte, index int64, v []byte) error {
	_, l, err := db.listLookup(key)
	switch {
	case err != nil:
		return err
	case l == nil:
		return ErrNoSuchKey
	}
	if index < 0 {
		index += int64(l.n)
	}
	if index < 0 || index >= int64(l.n) {
		return ErrIndexRange
	}
	l.set(int(index), v)
	db.putListItem(key, l.head+index, v)
	db.listChanged(key, 1)
	return nil
}

// ListInsert is LINSERT: v goes before (or after) the first element equal
// to pivot. It returns the new length, -1 when there is no pivot, 0 when
// the key is absent.
func (db *DB) ListInsert(key []byte, after bool, pivot, v []byte) (int, error) {
	_, l, err := db.listLookup(key)
	if l == nil || err != nil {
		return 0, err
	}
	i := l.indexOf(pivot)
	if i < 0 {
		return -1, nil
	}
	if after {
		i++
	}
	l.insert(i, v)
	// The elements on one side of the new one move by a position: shift
	// whichever side is shorter and rewrite it with the new element.
	if i < l.n-1-i {
		l.head--
		l.persistRange(db.e.sink, db.id, key, 0, i+1)
	} else {
		l.persistRange(db.e.sink, db.id, key, i, l.n-i)
	}
	db.listChanged(key, 1)
	return l.n, nil
}

// ListRem is LREM: it removes the first count elements equal to v (the
// last -count when negative, all when 0) and reports whether the key was
// deleted because it emptied.
func (db *DB) ListRem(key []byte, count int64, v []byte) (removed int, deleted bool, err error) {
	en, l, err := db.listLookup(key)
	if l == nil || err != nil {
		return 0, false, err
	}
	idx := l.matchIndexes(v, count)
	if len(idx) == 0 {
		return 0, false, nil
	}
	if len(idx) == l.n {
		db.removeRaw(key)
		db.e.stats.Dirty += int64(len(idx)) - 1
		return len(idx), true, nil
	}
	oldHead, oldN := l.head, l.n
	l.removeSorted(idx)
	// The kept elements form runs between removed ones; the longest run
	// keeps its positions, every other kept element is rewritten, and the
	// positions the list no longer spans are deleted.
	s, runStart, runLen := 0, 0, idx[0]
	for j := 1; j <= len(idx); j++ {
		start := idx[j-1] + 1
		end := oldN
		if j < len(idx) {
			end = idx[j]
		}
		if end-start > runLen {
			s, runStart, runLen = j, start, end-start
		}
	}
	m, k2 := l.n, len(idx)
	if m-runLen+k2 > m+2 {
		db.rewriteList(key, en, l)
	} else {
		l.head = oldHead + int64(s)
		fixed := runStart - s // the run's first index in the new list
		l.persistRange(db.e.sink, db.id, key, 0, fixed)
		l.persistRange(db.e.sink, db.id, key, fixed+runLen, m-fixed-runLen)
		db.deleteListItems(key, oldHead, oldHead+int64(s))
		db.deleteListItems(key, oldHead+int64(s)+int64(m), oldHead+int64(oldN))
	}
	db.listChanged(key, k2)
	return k2, false, nil
}

// ListTrim is LTRIM: it keeps the elements from start to stop (negative
// ones counting from the tail). found is false when the key is absent;
// deleted reports that nothing was kept and the key is gone.
func (db *DB) ListTrim(key []byte, start, stop int64) (found, deleted bool, err error) {
	en, l, err := db.listLookup(key)
	if l == nil || err != nil {
		return false, false, err
	}
	from, keep := l.RangeBounds(start, stop)
	front, back := from, l.n-from-keep
	if keep == 0 {
		db.removeRaw(key)
		db.e.stats.Dirty += int64(l.n) - 1
		return true, true, nil
	}
	oldHead, oldEnd := l.head, l.head+int64(l.n)
	l.trim(front, back)
	if front+back > keep+2 {
		db.rewriteList(key, en, l)
	} else {
		db.deleteListItems(key, oldHead, oldHead+int64(front))
		db.deleteListItems(key, oldEnd-int64(back), oldEnd)
	}
	db.listChanged(key, front+back)
	return true, false, nil
}

// ListMove is LMOVE/RPOPLPUSH: it pops from src's head (fromLeft) or tail
// and pushes the element onto dst's head (toLeft) or tail, creating dst,
// as one step. It returns a copy of the element (never nil: an empty
// element is []byte{}), nil when src is absent; srcDeleted reports that
// src emptied and is gone. A dst of another type is ErrWrongType and
// changes nothing.
func (db *DB) ListMove(src, dst []byte, fromLeft, toLeft bool) (v []byte, srcDeleted bool, err error) {
	_, sl, err := db.listLookup(src)
	if sl == nil || err != nil {
		return nil, false, err
	}
	_, dl, err := db.listLookup(dst)
	if err != nil {
		return nil, false, err
	}
	pos := sl.head
	if !fromLeft {
		pos += int64(sl.n) - 1
	}
	// Never nil, even for "": nil is how the caller tells an absent src.
	v = append([]byte{}, sl.pop(fromLeft)...)
	if string(src) == string(dst) {
		// A rotation: one list loses an end and gains the other.
		npos := sl.push(v, toLeft)
		if npos != pos {
			db.deleteListItems(src, pos, pos+1)
		}
		db.putListItem(src, npos, v)
		db.listChanged(src, 1)
		db.signalReady(src)
		return v, false, nil
	}
	if sl.n == 0 {
		db.removeRaw(src)
		srcDeleted = true
	} else {
		db.deleteListItems(src, pos, pos+1)
		db.listChanged(src, 1)
	}
	if dl == nil {
		dl = NewList()
		dl.push(v, toLeft)
		db.Set(dst, dl, false)
	} else {
		db.putListItem(dst, dl.push(v, toLeft), v)
		db.listChanged(dst, 1)
	}
	db.signalReady(dst)
	return v, srcDeleted, nil
}
