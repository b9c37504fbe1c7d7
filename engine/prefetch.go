package engine

import "bytes"

// Cache warming for pipelined batches. A lookup in a table of a million
// entries is a chain of dependent cache misses: the bucket, the node, the key's
// bytes, then for a set, hash or sorted-set command the same again inside the
// value. Sixteen commands run one after another pay those misses one at a
// time. Prefetch walks the whole batch level by level instead: every load of
// one level is independent of the others, so the CPU overlaps their misses,
// and the commands then find their memory in cache. It changes nothing: it
// only reads, and a guess that turns out wrong costs a wasted load.

// prefetchState is the engine's scratch space for Prefetch; sink keeps the
// compiler from dropping loads whose results are otherwise unused.
type prefetchState struct {
	keys   [][]byte
	sets   memberWarmer[struct{}]
	hashes memberWarmer[hashValue]
	zsets  memberWarmer[float64]
	sink   uint32
	// warmed counts the member buckets the last call queued, for tests.
	warmed int
}

// memberWarmer collects the bucket heads of members inside one kind of
// collection, then touches their nodes and key bytes.
type memberWarmer[V any] struct{ nodes []*dictNode[V] }

func (w *memberWarmer[V]) add(d *Dict[V], member []byte) {
	if n := d.bucketHead(str(member)); n != nil {
		w.nodes = append(w.nodes, n)
	}
}

// touchNodes reads each node's key header; touchKeys then reads the first
// byte of keys too long to live in their node.
func (w *memberWarmer[V]) touchNodes() (sink uint32) {
	for _, n := range w.nodes {
		sink += uint32(len(n.key))
	}
	return sink
}

func (w *memberWarmer[V]) touchKeys() (sink uint32) {
	for _, n := range w.nodes {
		if len(n.key) > dictShortKey {
			sink += uint32(n.key[0])
		}
	}
	clear(w.nodes)
	w.nodes = w.nodes[:0]
	return sink
}

// PrefetchKey is one key a command about to run names. Args are the
// command's arguments when Key is its first key (args[1]), for the member
// hints below; nil otherwise.
type PrefetchKey struct {
	Key  []byte
	Args [][]byte
}

// Prefetch warms the cache for the keys of a batch of commands about to run:
// buckets, then nodes, then values; then, inside hashtable-encoded values,
// the member a command of that type names: the argument after the key for
// sets and hashes (SADD, SISMEMBER, HSET, HGET, ...), the last argument for
// sorted sets (ZADD key score member, ZSCORE, ZINCRBY, ZREM of one member).
//
// A ref naming the same key as the one before it (sixteen pipelined
// commands on one key) shares its lookup.
func (db *DB) Prefetch(refs []PrefetchKey) {
	p := &db.e.prefetch
	keys := p.keys[:0]
	for i, r := range refs {
		if i == 0 || !bytes.Equal(r.Key, refs[i-1].Key) {
			keys = append(keys, r.Key)
		}
	}
	sink := uint32(db.keys.recs.Prefetch(keys))
	// Member hints need the key's value: looked up once per run of refs
	// to one key, and only for commands with a member argument.
	var obj Object
	var objKey []byte
	for _, r := range refs {
		args := r.Args
		if len(args) < 3 {
			continue
		}
		if objKey == nil || !bytes.Equal(r.Key, objKey) {
			obj, objKey = nil, r.Key
			if rec := db.keys.recs.Get(r.Key); rec != nil {
				obj = db.keys.ref(rec)
			}
		}
		if obj == nil {
			continue
		}
		switch v := obj.(type) {
		case *Set:
			if v.dict != nil {
				p.sets.add(v.dict, args[2])
			}
		case *Hash:
			if v.dict != nil {
				p.hashes.add(v.dict, args[2])
			}
		case *ZSet:
			if v.dict != nil {
				p.zsets.add(v.dict, args[len(args)-1])
			}
		}
	}
	p.warmed = len(p.sets.nodes) + len(p.hashes.nodes) + len(p.zsets.nodes)
	sink += p.sets.touchNodes() + p.hashes.touchNodes() + p.zsets.touchNodes()
	sink += p.sets.touchKeys() + p.hashes.touchKeys() + p.zsets.touchKeys()
	clear(keys)
	p.keys = keys[:0]
	p.sink = sink
}
