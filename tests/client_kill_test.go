package tests

import (
	"strings"
	"testing"
)

// TestClientKillForgetsAtOnce: CLIENT KILL frees the client before it
// replies, as Redis does, so the next command already sees it gone: not
// connected, not tracking, not subscribed, not blocked.
func TestClientKillForgetsAtOnce(t *testing.T) {
	onBothServers(t, func(t *testing.T, addr string) {
		h := dialRaw(t, addr)
		h.do("FLUSHALL")
		tr, sub, blk := dialRaw(t, addr), dialRaw(t, addr), dialRaw(t, addr)
		ids := []string{clientIDOf(tr), clientIDOf(sub), clientIDOf(blk)}
		tr.do("CLIENT", "TRACKING", "on")
		sub.do("SUBSCRIBE", "killch")
		blk.send("BLPOP", "killq", "0")
		waitBlocked(t, h, "1")
		// One pipeline: nothing runs in between on either server.
		for _, id := range ids {
			h.send("CLIENT", "KILL", "ID", id)
		}
		h.send("INFO", "clients")
		h.send("PUBSUB", "NUMSUB", "killch")
		for range ids {
			if v := h.read(); v.Int != 1 {
				t.Fatalf("CLIENT KILL: %s", v)
			}
		}
		info := h.read().Str
		for _, want := range []string{"connected_clients:1\r\n", "tracking_clients:0\r\n", "blocked_clients:0\r\n"} {
			if !strings.Contains(info, want) {
				t.Errorf("INFO clients right after CLIENT KILL lacks %q:\n%s", want, info)
			}
		}
		if v := h.read(); len(v.Elems) != 2 || v.Elems[1].Int != 0 {
			t.Errorf("PUBSUB NUMSUB right after CLIENT KILL: %s", v)
		}
	})
}
