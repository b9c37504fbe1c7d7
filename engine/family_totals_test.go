package engine

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// walkedTotals sums what INFO's family sections report by visiting every
// native key, as INFO did before it kept running totals.
func walkedTotals(e *Engine) (QueueStats, DelayStats, NumpoolStats, RoomStats) {
	var q QueueStats
	var d DelayStats
	var p NumpoolStats
	var r RoomStats
	for _, db := range e.dbs {
		db.eachBound(func(k string, b keyBound) {
			switch v := b.(type) {
			case *Queue:
				q.Ready += int64(v.counts[jobReady])
				q.Delayed += int64(v.counts[jobDelayed])
				q.Inflight += int64(v.counts[jobInflight])
				q.Dead += int64(v.counts[jobDead])
			case *Delay:
				d.Timers += int64(v.Len())
				d.Leased += int64(len(v.leases))
			case *Numpool:
				for i, c := range v.counts {
					p.Counts[i] += int64(c)
				}
			case *Room:
				r.Online += int64(v.presence.online())
				r.Messages += v.nativeItems()
				r.Pullers += int64(len(e.waiters[dbKey{db.id, k}]))
			}
		})
	}
	return q, d, p, r
}

func checkTotals(t *testing.T, e *Engine, when string) {
	t.Helper()
	q, d, p, r := walkedTotals(e)
	gq, gd, gp, gr := e.QueueStats(), e.DelayStats(), e.NumpoolStats(), e.RoomStats()
	if got := [4]int64{gq.Ready, gq.Delayed, gq.Inflight, gq.Dead}; got != [4]int64{q.Ready, q.Delayed, q.Inflight, q.Dead} {
		t.Fatalf("%s: INFO queue ready/delayed/inflight/dead %v, the keys hold %v", when, got,
			[4]int64{q.Ready, q.Delayed, q.Inflight, q.Dead})
	}
	if gd.Timers != d.Timers || gd.Leased != d.Leased {
		t.Fatalf("%s: INFO delay timers/leased %d/%d, the keys hold %d/%d", when, gd.Timers, gd.Leased, d.Timers, d.Leased)
	}
	if gp.Counts != p.Counts {
		t.Fatalf("%s: INFO numpool counts %v, the keys hold %v", when, gp.Counts, p.Counts)
	}
	if gr.Online != r.Online || gr.Messages != r.Messages || gr.Pullers != r.Pullers {
		t.Fatalf("%s: INFO room online/messages/pullers %d/%d/%d, the keys hold %d/%d/%d", when,
			gr.Online, gr.Messages, gr.Pullers, r.Online, r.Messages, r.Pullers)
	}
}

// TestFamilyTotalsFollowEveryChange: INFO's family figures, kept as running
// totals, equal a walk over every key after random writes, deliveries,
// leases running out, presence expiring, messages trimmed, and keys
// deleted, renamed, copied, moved, expired, swapped and flushed, and after
// a restart.
func TestFamilyTotalsFollowEveryChange(t *testing.T) {
	f := newEngineFixture(t)
	l := f.e.limits
	l.RoomMaxMessages, l.RoomImportantMax, l.RoomImportantTTL, l.RoomPresenceTTL = 5, 3, 4000, 3000
	f.e.SetLimits(l)
	rng := rand.New(rand.NewPCG(36, 1))
	key := func(family string) []byte { return b(fmt.Sprintf("%s%d", family, rng.IntN(6))) }
	left := 0 // leaves that took a user offline
	for step := range 3000 {
		db := f.e.DB(rng.IntN(3))
		now := f.e.Now()
		switch rng.IntN(16) {
		case 0, 1:
			db.QueuePush(key("q"), b("job"), QueuePushArgs{ReadyAt: now + int64(rng.IntN(3))*1000, MaxAttempts: 2})
		case 2:
			db.QueuePop(key("q"), QueuePopArgs{Consumer: b("c"), Count: 1 + rng.IntN(3), Lease: 1500})
		case 3:
			db.DelayAdd(key("d"), b(fmt.Sprint(rng.IntN(20))), DelayAddArgs{Due: now + int64(rng.IntN(4000))})
		case 4:
			db.DelayPop(key("d"), 1+rng.IntN(3), int64(rng.IntN(2))*2000)
		case 5:
			db.NumpoolAdd(key("p"), [][]byte{b(fmt.Sprint(rng.IntN(30)))}, nil)
		case 6:
			db.NumpoolEvent(key("p"), NumCall, NumEventArgs{Lease: int64(1 + rng.IntN(3000))})
		case 7:
			db.RoomHeartbeat(key("r"), [][]byte{b(fmt.Sprint(rng.IntN(6))), b(fmt.Sprintf("u%d", rng.IntN(4)))})
		case 8:
			k := key("r")
			before, _ := db.RoomOnline(k)
			if after, _ := db.RoomLeave(k, [][]byte{b(fmt.Sprint(rng.IntN(6))), b(fmt.Sprintf("u%d", rng.IntN(4)))}); after < before {
				left++
			}
		case 9:
			db.RoomPub(key("r"), b("m"), rng.IntN(3) == 0)
		case 10:
			db.UserDelete(key([]string{"q", "d", "p", "r"}[rng.IntN(4)]), rng.IntN(2) == 0)
		case 11:
			fam := []string{"q", "d", "p", "r"}[rng.IntN(4)]
			db.Rename(key(fam), key(fam))
		case 12:
			fam := []string{"q", "d", "p", "r"}[rng.IntN(4)]
			db.CopyTo(key(fam), f.e.DB(rng.IntN(3)), key(fam), rng.IntN(2) == 0)
		case 13:
			db.SetExpire(key([]string{"q", "d", "p", "r"}[rng.IntN(4)]), now+int64(rng.IntN(3000)))
		case 14:
			if rng.IntN(10) == 0 {
				f.e.SwapDB(rng.IntN(3), rng.IntN(3))
			} else if rng.IntN(40) == 0 {
				db.Flush()
			}
		case 15:
			f.advance(time.Duration(rng.IntN(1500)) * time.Millisecond)
		}
		checkTotals(t, f.e, fmt.Sprintf("step %d", step))
	}
	if left == 0 {
		t.Fatal("no ROOM.LEAVE took a user offline: the test does not exercise it")
	}
	f.advance(10 * time.Second)
	checkTotals(t, f.e, "after every lease and presence ran out")
	r := f.restart(time.Second)
	checkTotals(t, r.e, "after a restart")
	r.e.FlushAll()
	checkTotals(t, r.e, "after FLUSHALL")
	if q := r.e.QueueStats(); q.Ready+q.Delayed+q.Inflight+q.Dead != 0 {
		t.Fatalf("after FLUSHALL INFO queue still counts jobs: %+v", q)
	}
}
