package engine

// DELAY keys in the keyspace: the commands' operations, their change
// records, and the key's one scheduler entry. The entry sits at the earliest
// due time still in the future; when it fires, the key is signaled ready and
// ServeBlocked hands the due timers to blocked DELAY.POP clients in the order
// they blocked. Timers already due need no entry: whoever pops next gets
// them, and a client about to block is served at once instead.

// delayRead looks key up for a reading DELAY command.
func (db *DB) delayRead(key []byte) (*Delay, error) { return lookupAs[*Delay](db, key, true) }

// delayWrite looks key up for a writing DELAY command, returning the stored
// key name too (the scheduler entry's).
func (db *DB) delayWrite(key []byte) (string, *Delay, error) {
	en, found := db.find(key)
	k := str(key)
	if !found {
		return "", nil, nil
	}
	d, ok := en.obj.(*Delay)
	if !ok {
		return "", nil, ErrWrongType
	}
	db.touch(en.rec)
	return k, d, nil
}

// armDelay points the key's scheduler entry at its earliest future due
// time, and signals the key ready when a timer is due now. Every change to
// a DELAY key ends with it.
func (db *DB) armDelay(k string, d *Delay) {
	want := int64(0)
	if n := d.first(); n != nil {
		if n.val.due > db.e.now {
			want = n.val.due
		} else {
			db.signalReady(bytesOf(k))
		}
	}
	if want == d.armed {
		return
	}
	db.disarmDelay(k, d)
	if want != 0 {
		d.armed = want
		db.e.schedule(Timer{When: want, Kind: timerDelay, DB: uint8(db.phys), Key: k})
	}
}

// disarmDelay removes the key's scheduler entry (the key is going away or
// moving to another name).
func (db *DB) disarmDelay(k string, d *Delay) {
	if d.armed != 0 {
		db.e.unschedule(Timer{When: d.armed, Kind: timerDelay, DB: uint8(db.phys), Key: k})
		d.armed = 0
	}
}

// timerDelay is the kind of a DELAY key's scheduler entry.
var timerDelay TimerKind

func init() { timerDelay = registerTimerKind("delay", (*Engine).fireDelay) }

// fireDelay is the scheduler's handler for DELAY keys. An entry left behind
// by a key that went finds another object (or none) and is ignored.
func (e *Engine) fireDelay(t Timer) {
	db := e.timerDB(t)
	k := t.Key
	d, ok := db.rawObject(bytesOf(k)).(*Delay)
	if !ok || d.armed != t.When {
		return
	}
	d.armed = 0
	db.armDelay(k, d)
}

// attached and detached make a DELAY value key-bound (family.go): its
// scheduler entry names the key, so it follows RENAME and MOVE and goes
// with DEL, expiry and FLUSHDB.
func (d *Delay) attached(db *DB, k string) {
	st := delayState.of(db.e)
	st.keys++
	d.joinTotals(&st.totals)
	db.armDelay(k, d)
}

func (d *Delay) detached(db *DB, k string) {
	delayState.of(db.e).keys--
	d.leaveTotals()
	db.disarmDelay(k, d)
}

// persistTimer writes one timer's record.
func (db *DB) persistTimer(key []byte, d *Delay, n *delayNode) {
	db.e.recordBuf = d.encodeTimer(db.e.recordBuf[:0], n.key, &n.val)
	db.e.sink.PutItem(db.id, key, bytesOf(n.key), db.e.recordBuf)
}

// delayChanged ends a write to a DELAY key: the key goes when its last
// timer did, else its scheduler entry is brought up to date.
func (db *DB) delayChanged(k string, key []byte, d *Delay) (deleted bool) {
	db.modified(key)
	if d.Len() == 0 {
		db.removeRaw(key)
		return true
	}
	db.armDelay(k, d)
	return false
}

// DelayAddArgs is one DELAY.ADD.
type DelayAddArgs struct {
	Due        int64 // unix ms
	Period     int64 // 0: one-shot
	Payload    []byte
	HasPayload bool
	NX, XX     bool
}

// DelayAdd creates or replaces a timer (a replaced timer takes the new due
// time, period and payload, and any lease it was out on ends). It reports
// whether the timer is new, and whether anything was written (NX and XX can
// forbid it).
func (db *DB) DelayAdd(key, member []byte, a DelayAddArgs) (added, written bool, err error) {
	k, d, err := db.delayWrite(key)
	if err != nil {
		return false, false, err
	}
	var n *delayNode
	if d != nil {
		n = d.timers.find(str(member))
	}
	if (n != nil && a.NX) || (n == nil && a.XX) {
		return false, false, nil
	}
	if d == nil {
		d = newDelay()
		k = str(key)
		db.Set(key, d, true)
	}
	t := delayTimer{due: a.Due, period: a.Period}
	if a.HasPayload {
		t.payload = newPayload(a.Payload)
	}
	if n == nil {
		n = d.insert(str(member), t)
		added = true
	} else {
		d.dropLease(n.key)
		d.reschedule(n, t.due)
		d.store(n, t)
	}
	db.persistTimer(key, d, n)
	db.delayChanged(k, key, d)
	return added, true, nil
}

// DelayTouch makes an existing timer due ms from now, ending any lease it
// is out on; false when there is no such timer.
func (db *DB) DelayTouch(key, member []byte, ms int64) (bool, error) {
	k, d, err := db.delayWrite(key)
	if d == nil || err != nil {
		return false, err
	}
	n := d.timers.find(str(member))
	if n == nil {
		return false, nil
	}
	d.dropLease(n.key)
	d.reschedule(n, db.e.now+ms)
	db.persistTimer(key, d, n)
	db.delayChanged(k, key, d)
	return true, nil
}

// DelayCancel removes timers, leased or not, and returns how many it found.
func (db *DB) DelayCancel(key []byte, members [][]byte) (removed int, deleted bool, err error) {
	k, d, err := db.delayWrite(key)
	if d == nil || err != nil {
		return 0, false, err
	}
	for _, m := range members {
		if n := d.timers.find(str(m)); n != nil {
			d.remove(n)
			db.e.sink.DeleteItem(db.id, key, m)
			removed++
		}
	}
	if removed == 0 {
		return 0, false, nil
	}
	return removed, db.delayChanged(k, key, d), nil
}

// DelayTTL is the ms until member is due (0 when it already is), or -2 when
// there is no such timer.
func (db *DB) DelayTTL(key, member []byte) (int64, error) {
	d, err := db.delayRead(key)
	if d == nil || err != nil {
		return -2, err
	}
	n := d.timers.find(str(member))
	if n == nil {
		return -2, nil
	}
	return max(0, n.val.due-db.e.now), nil
}

// DelayPop delivers up to count due timers (see Delay.pop); nil when the key
// is absent. The slice is valid until the next DelayPop.
func (db *DB) DelayPop(key []byte, count int, lease int64) (fired []FiredTimer, deleted bool, err error) {
	k, d, err := db.delayWrite(key)
	if d == nil || err != nil {
		return nil, false, err
	}
	e, st := db.e, delayState.of(db.e)
	st.due, st.out = d.pop(e.now, count, lease, st.due, st.out,
		func(n *delayNode) { db.persistTimer(key, d, n) },
		func(n *delayNode) { e.sink.DeleteItem(db.id, key, bytesOf(n.key)) })
	fired = st.out
	if cap(st.out) > 1024 {
		st.due, st.out = nil, nil // a huge COUNT is not kept
	}
	if len(fired) == 0 {
		return fired, false, nil
	}
	st.count(e.NowTime(), fired)
	return fired, db.delayChanged(k, key, d), nil
}

// DelayAck settles the leases of members and returns how many were leased.
func (db *DB) DelayAck(key []byte, members [][]byte) (acked int, deleted bool, err error) {
	k, d, err := db.delayWrite(key)
	if d == nil || err != nil {
		return 0, false, err
	}
	for _, m := range members {
		n := d.timers.find(str(m))
		if n == nil {
			continue
		}
		gone, ok := d.ack(n)
		if !ok {
			continue
		}
		acked++
		if gone {
			db.e.sink.DeleteItem(db.id, key, m)
		} else {
			db.persistTimer(key, d, n)
		}
	}
	if acked == 0 {
		return 0, false, nil
	}
	delayState.of(db.e).acked += int64(acked)
	return acked, db.delayChanged(k, key, d), nil
}

// DelayLen is the number of timers, 0 when the key is absent.
func (db *DB) DelayLen(key []byte) (int, error) {
	d, err := db.delayRead(key)
	if d == nil || err != nil {
		return 0, err
	}
	return d.Len(), nil
}

// DelayNext is the earliest timer; ok is false when the key is absent.
func (db *DB) DelayNext(key []byte) (next TimerDue, ok bool, err error) {
	d, err := db.delayRead(key)
	if d == nil || err != nil {
		return next, false, err
	}
	n := d.first()
	return TimerDue{Member: n.key, Due: n.val.due}, true, nil
}

// DelayRange lists the timers due from..to (inclusive), earliest first,
// skipping offset of them and returning at most count (count < 0: all).
func (db *DB) DelayRange(key []byte, from, to int64, offset, count int64) ([]TimerDue, error) {
	d, err := db.delayRead(key)
	if d == nil || err != nil || from > to || offset < 0 || count == 0 {
		return nil, err
	}
	d.sortLoaded()
	var out []TimerDue
	d.index.Ascend(delayRef{from, noMember}, func(r delayRef) bool {
		if r.due > to {
			return false
		}
		if offset > 0 {
			offset--
			return true
		}
		out = append(out, TimerDue{Member: r.n.key, Due: r.due})
		return count < 0 || int64(len(out)) < count
	})
	return out, nil
}
