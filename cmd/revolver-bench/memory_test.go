package main

import (
	"fmt"
	"testing"
)

func TestTimerMemberIs16Bytes(t *testing.T) {
	for _, i := range []int{0, 7, 1_000_000, 9_999_999_999} {
		got := string(appendTimerMember(nil, i))
		want := fmt.Sprintf("$16\r\ntimer:%010d\r\n", i)
		if got != want || len(fmt.Sprintf("timer:%010d", i)) != 16 {
			t.Errorf("member %d: %q, want %q", i, got, want)
		}
	}
}
