package server

import (
	"testing"

	"github.com/revolver-db/revolver/engine"
)

func TestSameWarmth(t *testing.T) {
	ref := func(args ...string) engine.PrefetchKey {
		a := make([][]byte, len(args))
		for i, s := range args {
			a[i] = []byte(s)
		}
		return engine.PrefetchKey{Key: a[1], Args: a}
	}
	for _, tc := range []struct {
		a, b engine.PrefetchKey
		want bool
	}{
		{ref("GET", "k"), ref("GET", "k"), true},
		{ref("GET", "k"), ref("GET", "j"), false},
		{ref("SPOP", "s"), ref("SCARD", "s"), true},
		{ref("SADD", "s", "m"), ref("SADD", "s", "m"), true},
		{ref("SADD", "s", "m"), ref("SADD", "s", "n"), false},
		{ref("SCARD", "s"), ref("SADD", "s", "m"), false}, // b has a member a did not warm
		{ref("SADD", "s", "m"), ref("SCARD", "s"), true},
		{ref("ZADD", "z", "1", "m"), ref("ZADD", "z", "2", "m"), false},
		{ref("ZADD", "z", "1", "m"), ref("ZADD", "z", "1", "n"), false},
		{engine.PrefetchKey{Key: []byte("k")}, engine.PrefetchKey{Key: []byte("k")}, true}, // MSET's later keys
	} {
		if got := sameWarmth(tc.a, tc.b); got != tc.want {
			t.Errorf("sameWarmth(%q, %q) = %v, want %v", tc.a.Args, tc.b.Args, got, tc.want)
		}
	}
}
