package console

import (
	"container/heap"
	"sort"
	"strconv"
	"time"

	"github.com/revolver-db/revolver/engine"
)

// Finding each family's largest keys for /metrics: the native keys are
// walked a chunk at a time (engine.WalkNative), each chunk under its own
// short hold of the engine lock, keeping a min-heap of the N largest per
// family. The plain keys (possibly millions) are never visited: only the
// key-bound values the families register.

// walkChunk is how many native keys one hold of the engine lock visits:
// well under a millisecond (a few hundred nanoseconds a key).
const walkChunk = 256

// topHeap is a min-heap of keys by size: the smallest of the N largest on
// top, so a larger key replaces it.
type topHeap []engine.NativeKey

func (h topHeap) Len() int { return len(h) }
func (h topHeap) Less(i, j int) bool {
	if h[i].Items != h[j].Items {
		return h[i].Items < h[j].Items
	}
	// Equal sizes: the later name loses, so the choice is stable.
	if h[i].DB != h[j].DB {
		return h[i].DB > h[j].DB
	}
	return h[i].Key > h[j].Key
}
func (h topHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *topHeap) Push(x any)   { *h = append(*h, x.(engine.NativeKey)) }
func (h *topHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// offer keeps k if it is among the n largest seen.
func (h *topHeap) offer(k engine.NativeKey, n int) {
	switch {
	case h.Len() < n:
		heap.Push(h, k)
	case (topHeap{k, (*h)[0]}).Less(1, 0):
		(*h)[0] = k
		heap.Fix(h, 0)
	}
}

// topNativeKeys returns the n largest keys of each family, largest first,
// walking until done or until the deadline passes.
func topNativeKeys(b Backend, n int, deadline time.Time) map[string][]engine.NativeKey {
	heaps := map[string]*topHeap{}
	var cur engine.NativeCursor
	for !cur.Done && time.Now().Before(deadline) {
		b.View(func(e *engine.Engine) {
			cur = e.WalkNative(cur, walkChunk, func(k engine.NativeKey) {
				h := heaps[k.Family]
				if h == nil {
					h = &topHeap{}
					heaps[k.Family] = h
				}
				h.offer(k, n)
			})
		})
	}
	out := make(map[string][]engine.NativeKey, len(heaps))
	for fam, h := range heaps {
		ks := []engine.NativeKey(*h)
		sort.Slice(ks, func(i, j int) bool { return topHeap(ks).Less(j, i) })
		out[fam] = ks
	}
	return out
}

// keyCommand is one command of a scrape's pipeline after INFO: a SELECT,
// or a top key's own stats command.
type keyCommand struct {
	args   []string
	key    engine.NativeKey
	selDB  bool // a SELECT of key.DB
	family string
}

// familyKeyCommand is each family's per-key stats command.
var familyKeyCommand = map[string]string{
	"delay":   "DELAY.LEN",
	"queue":   "QUEUE.STATS",
	"numpool": "NUMPOOL.INFO",
	"room":    "ROOM.INFO",
}

// planKeyCommands lists the commands that read the top keys: grouped by
// database, each group after a SELECT. Going through commands (not the
// engine) checks each key against the user's ACL.
func planKeyCommands(top map[string][]engine.NativeKey) []keyCommand {
	var all []engine.NativeKey
	for _, fam := range sortedKeys(top) {
		all = append(all, top[fam]...)
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].DB < all[j].DB })
	var plan []keyCommand
	db := -1
	for _, k := range all {
		cmd, ok := familyKeyCommand[k.Family]
		if !ok {
			continue
		}
		if k.DB != db {
			db = k.DB
			plan = append(plan, keyCommand{args: []string{"SELECT", strconv.Itoa(db)}, key: k, selDB: true})
		}
		plan = append(plan, keyCommand{args: []string{cmd, k.Key}, key: k, family: k.Family})
	}
	return plan
}
