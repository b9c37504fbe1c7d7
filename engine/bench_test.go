package engine

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"
)

// keyspace1M fills database 0 with 1M string keys of 10-byte values, as the
// memory target and redis-benchmark -r 1000000 do.
func keyspace1M(b *testing.B) (*Engine, [][]byte) {
	e := New(Options{})
	keys := make([][]byte, 1<<20)
	val := []byte("0123456789")
	e.Lock()
	for i := range keys {
		keys[i] = []byte("key:" + strconv.Itoa(i))
		e.DB(0).SetString(keys[i], val, SetOptions{})
	}
	e.Unlock()
	return e, keys
}

// BenchmarkGetRandom1M is GET of random existing keys: the cost is the
// memory accesses of one lookup (bucket, node, value).
func BenchmarkGetRandom1M(b *testing.B) {
	e, keys := keyspace1M(b)
	db := e.DB(0)
	e.Lock()
	defer e.Unlock()
	r := rand.New(rand.NewPCG(1, 2))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		db.Get(keys[r.IntN(len(keys))])
	}
}

// BenchmarkSetRandom1M is SET over random existing keys (in-place update).
func BenchmarkSetRandom1M(b *testing.B) {
	e, keys := keyspace1M(b)
	db := e.DB(0)
	e.Lock()
	defer e.Unlock()
	r := rand.New(rand.NewPCG(1, 2))
	val := []byte("abcdefghij")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		db.SetString(keys[r.IntN(len(keys))], val, SetOptions{})
	}
}

// BenchmarkSetNew is SET of keys that do not exist yet (insert path).
func BenchmarkSetNew(b *testing.B) {
	e := New(Options{})
	db := e.DB(0)
	keys := make([][]byte, b.N)
	for i := range keys {
		keys[i] = []byte("key:" + strconv.Itoa(i))
	}
	val := []byte("0123456789")
	e.Lock()
	defer e.Unlock()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		db.SetString(keys[i], val, SetOptions{})
	}
}

// BenchmarkGetBatch16 is GET of random keys in batches of 16 with and
// without prefetching the batch, as a pipelined client sends them.
func BenchmarkGetBatch16(b *testing.B) {
	e, keys := keyspace1M(b)
	db := e.DB(0)
	e.Lock()
	defer e.Unlock()
	batch := make([]PrefetchKey, 16)
	for _, prefetch := range []bool{false, true} {
		name := "plain"
		if prefetch {
			name = "prefetch"
		}
		b.Run(name, func(b *testing.B) {
			r := rand.New(rand.NewPCG(1, 2))
			for i := 0; i < b.N; i += 16 {
				for j := range batch {
					batch[j].Key = keys[r.IntN(len(keys))]
				}
				if prefetch {
					db.Prefetch(batch)
				}
				for _, k := range batch {
					db.Get(k.Key)
				}
			}
		})
	}
}

// BenchmarkMemberBatch16 is SADD, HSET and ZADD of random members of one
// collection holding 1M of them, in batches of 16 as a pipelined client sends
// them, with and without prefetching the batch.
func BenchmarkMemberBatch16(b *testing.B) {
	const n = 1000000
	e := New(Options{})
	db := e.DB(0)
	members := make([][]byte, n)
	val := []byte("xxx")
	e.Lock()
	defer e.Unlock()
	for i := range members {
		members[i] = []byte(fmt.Sprintf("element:%012d", i))
		db.SAdd([]byte("myset"), [][]byte{members[i]})
		db.HSet([]byte("myhash"), [][]byte{members[i], val})
		db.ZAdd([]byte("myzset"), ZAddFlags{}, []float64{float64(i)}, members[i:i+1])
	}
	scores := []float64{1}
	ops := []struct {
		name string
		args []string // the command, with the member last
		run  func(args [][]byte)
	}{
		{"sadd", []string{"SADD", "myset", ""}, func(a [][]byte) { db.SAdd(a[1], a[2:]) }},
		{"hset", []string{"HSET", "myhash", "", "xxx"}, func(a [][]byte) { db.HSet(a[1], a[2:]) }},
		{"zadd", []string{"ZADD", "myzset", "1", ""}, func(a [][]byte) { db.ZAdd(a[1], ZAddFlags{}, scores, a[3:]) }},
	}
	batch := make([][][]byte, 16)
	refs := make([]PrefetchKey, 16)
	for _, op := range ops {
		member := 2 // the member's position in args
		if op.name == "zadd" {
			member = 3
		}
		for j := range batch {
			batch[j] = make([][]byte, len(op.args))
			for k, a := range op.args {
				batch[j][k] = []byte(a)
			}
		}
		for _, prefetch := range []bool{false, true} {
			name := op.name + "/plain"
			if prefetch {
				name = op.name + "/prefetch"
			}
			b.Run(name, func(b *testing.B) {
				r := rand.New(rand.NewPCG(1, 2))
				for i := 0; i < b.N; i += 16 {
					for _, args := range batch {
						args[member] = members[r.IntN(n)]
					}
					if prefetch {
						for j, args := range batch {
							refs[j] = PrefetchKey{Key: args[1], Args: args}
						}
						db.Prefetch(refs)
					}
					for _, args := range batch {
						op.run(args)
					}
				}
			})
		}
	}
}

// BenchmarkSetBatch16BySize is SADD of random members already in a set of
// each size, in batches of 16, with and without prefetching the batch: where
// warming members starts to pay (a small set is in cache anyway).
func BenchmarkSetBatch16BySize(b *testing.B) {
	for _, size := range []int{1, 64, 1024, 16384, 262144} {
		e := New(Options{})
		db := e.DB(0)
		members := make([][]byte, size)
		key := []byte("myset")
		e.Lock()
		for i := range members {
			members[i] = fmt.Appendf(nil, "element:%012d", i)
			db.SAdd(key, members[i:i+1])
		}
		batch := make([][][]byte, 16)
		refs := make([]PrefetchKey, 16)
		for j := range batch {
			batch[j] = [][]byte{[]byte("SADD"), key, nil}
		}
		for _, prefetch := range []bool{false, true} {
			name := fmt.Sprintf("%d/plain", size)
			if prefetch {
				name = fmt.Sprintf("%d/prefetch", size)
			}
			b.Run(name, func(b *testing.B) {
				r := rand.New(rand.NewPCG(1, 2))
				for i := 0; i < b.N; i += 16 {
					for _, args := range batch {
						args[2] = members[r.IntN(size)]
					}
					if prefetch {
						for j, args := range batch {
							refs[j] = PrefetchKey{Key: key, Args: args}
						}
						db.Prefetch(refs)
					}
					for _, args := range batch {
						db.SAdd(key, args[2:])
					}
				}
			})
		}
		e.Unlock()
	}
}
