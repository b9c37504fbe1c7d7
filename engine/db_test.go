package engine

import (
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestDBRandomKey(t *testing.T) {
	e, clock, _ := newTestEngine(t)
	e.Lock()
	db := e.DB(0)
	if k := db.RandomKey(); k != nil {
		t.Fatalf("RandomKey of an empty db = %q", k)
	}
	for i := 0; i < 20; i++ {
		db.SetString(b("live:"+strconv.Itoa(i)), b("v"), SetOptions{})
	}
	for i := 0; i < 200; i++ {
		db.SetString(b("dying:"+strconv.Itoa(i)), b("v"), SetOptions{ExpireAt: e.Now() + 10})
	}
	e.Unlock()
	clock.Advance(time.Second) // no RunTimers: the dying keys are still stored
	e.Lock()
	defer e.Unlock()
	seen := map[string]bool{}
	for i := 0; i < 2000; i++ {
		k := db.RandomKey()
		if k == nil || string(k[:5]) != "live:" {
			t.Fatalf("RandomKey returned %q", k)
		}
		seen[string(k)] = true
	}
	if len(seen) != 20 {
		t.Fatalf("RandomKey reached %d of 20 keys", len(seen))
	}
	// Every sampled dead key was removed on the way.
	if exp := e.Stats().ExpiredKeys; exp == 0 || db.Len() != 220-int(exp) {
		t.Fatalf("len %d, expired %d", db.Len(), e.Stats().ExpiredKeys)
	}
	// A database of dead keys only has no random key.
	db.Flush()
	db.SetString(b("d"), b("v"), SetOptions{ExpireAt: e.Now() + 1})
	e.Unlock()
	clock.Advance(time.Second)
	e.Lock()
	if k := db.RandomKey(); k != nil {
		t.Fatalf("RandomKey of a db of expired keys = %q", k)
	}
}

func TestDBKeysAndScanSkipExpired(t *testing.T) {
	e, clock, log := newTestEngine(t)
	e.Lock()
	db := e.DB(0)
	var want []string
	for i := 0; i < 300; i++ {
		k := "k" + strconv.Itoa(i)
		if i%3 == 0 {
			db.SetString(b(k), b("v"), SetOptions{ExpireAt: e.Now() + 5})
			continue
		}
		db.SetString(b(k), b("v"), SetOptions{})
		want = append(want, k)
	}
	sort.Strings(want)
	e.Unlock()
	clock.Advance(10 * time.Millisecond)
	e.Lock()
	defer e.Unlock()
	log.take()

	var keys []string
	db.Keys(nil, func(k string) { keys = append(keys, k) })
	sort.Strings(keys)
	if len(keys) != len(want) {
		t.Fatalf("KEYS returned %d keys, want %d", len(keys), len(want))
	}
	for i := range keys {
		if keys[i] != want[i] {
			t.Fatalf("KEYS: %q, want %q", keys[i], want[i])
		}
	}
	if db.Len() != len(want) || e.Stats().ExpiredKeys != 100 {
		t.Fatalf("after KEYS: len %d, expired %d", db.Len(), e.Stats().ExpiredKeys)
	}

	// A full SCAN with a small COUNT returns every live key.
	for i := 0; i < 90; i += 3 {
		db.SetString(b("k"+strconv.Itoa(i)), b("v"), SetOptions{ExpireAt: e.Now() + 5})
	}
	e.Unlock()
	clock.Advance(10 * time.Millisecond)
	e.Lock()
	seen := map[string]bool{}
	cursor, calls := uint64(0), 0
	for {
		cursor = db.Scan(cursor, 3, func(k string, typ Type) {
			if typ != TypeString {
				t.Fatalf("scan: %q has type %v", k, typ)
			}
			seen[strings.Clone(k)] = true
		})
		calls++
		if cursor == 0 {
			break
		}
	}
	if len(seen) != len(want) || calls < 10 {
		t.Fatalf("SCAN returned %d keys in %d calls, want %d", len(seen), calls, len(want))
	}
	for _, k := range want {
		if !seen[k] {
			t.Fatalf("SCAN missed %q", k)
		}
	}
	if db.Len() != len(want) {
		t.Fatalf("SCAN left expired keys: len %d", db.Len())
	}
	expired := 0
	for _, ev := range log.events {
		if len(ev) > 8 && ev[:8] == "expired " {
			expired++
		}
	}
	if expired != 130 {
		t.Fatalf("%d expired events, want one per dead key (130)", expired)
	}
}

func TestDBMemoryUsage(t *testing.T) {
	e, _, _ := newTestEngine(t)
	e.Lock()
	defer e.Unlock()
	db := e.DB(0)
	db.SetString(b("k"), b("v"), SetOptions{})
	small := db.KeyMemoryUsage(b("k"))
	db.SetString(b("k"), make([]byte, 1000), SetOptions{})
	big := db.KeyMemoryUsage(b("k"))
	if small <= 0 || big < small+1000 {
		t.Fatalf("MEMORY USAGE small %d, 1000-byte value %d", small, big)
	}
}
