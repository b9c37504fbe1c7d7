package server

import (
	"strings"
	"testing"
)

// TestBatchKeysWorth checks which batches prefetch warms: more than one key,
// or one key with members that differ; not one key alone, nor one member
// every command repeats.
func TestBatchKeysWorth(t *testing.T) {
	s := testServer(t)
	for _, tc := range []struct {
		batch []string
		keys  int
		worth bool
	}{
		{[]string{"GET a"}, 1, false},
		{[]string{"RPOP l", "RPOP l", "RPOP l"}, 3, false},
		{[]string{"SADD s m", "SADD s m", "SADD s m"}, 3, false},
		{[]string{"HSET h f v", "HSET h f v"}, 2, false},
		{[]string{"SADD s a"}, 1, false},
		{[]string{"SADD s a", "SADD s b"}, 2, true},
		{[]string{"SADD s m", "SADD s m", "SISMEMBER s n"}, 3, true},
		{[]string{"HSET h f v1", "HSET h f v2"}, 2, true},
		{[]string{"RPOP l", "SADD l m", "SADD l m"}, 3, false},
		{[]string{"GET a", "GET b"}, 2, true},
		{[]string{"MGET a b"}, 2, true},
		{[]string{"MSET a 1 b 2"}, 2, true},
		{[]string{"PING", "NOSUCHCMD x y", "ECHO e"}, 0, false},
		{[]string{"PFCOUNT h", "PFCOUNT h"}, 2, false},
	} {
		var batch [][][]byte
		for _, cmd := range tc.batch {
			var args [][]byte
			for _, a := range strings.Fields(cmd) {
				args = append(args, []byte(a))
			}
			batch = append(batch, args)
		}
		refs, found, worth := s.batchKeys(batch, nil, nil)
		if len(refs) != tc.keys || worth != tc.worth || len(found) != len(batch) {
			t.Errorf("%q: %d keys, worth %v, %d entries; want %d keys, worth %v, %d entries",
				tc.batch, len(refs), worth, len(found), tc.keys, tc.worth, len(batch))
		}
	}
}
