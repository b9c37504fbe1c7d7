package console

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/revolver-db/revolver/resp"
)

// DELAY's part of the console: a key's pending timers (DELAY.LEN), the
// earliest (DELAY.NEXT) and how late it is, and the next timers in due
// order (DELAY.RANGE).

func init() {
	registerFamily(&family{
		name: "delay",
		summary: func(key string) [][]string {
			return [][]string{{"DELAY.LEN", key}, {"DELAY.NEXT", key}}
		},
		describe: func(rs []resp.Value, now int64) (map[string]any, error) {
			out := map[string]any{"pending": rs[0].Int, "next_member": nil, "next_due": nil, "late_ms": 0}
			if next := rs[1].Elems; len(next) == 2 {
				due, err := strconv.ParseInt(text(next[1]), 10, 64)
				if err != nil {
					return nil, fmt.Errorf("unexpected DELAY.NEXT reply %s", rs[1])
				}
				out["next_member"], out["next_due"], out["late_ms"] = next[0].Str, due, max(now-due, 0)
			}
			return out, nil
		},
	})
}

// delayTimers is GET /api/delay/timers: the key's timers from offset in
// due order, count of them.
func (c *Console) delayTimers(w http.ResponseWriter, r *http.Request, s *session) {
	kr := readKeyRequest(r, s, "delay")
	offset := kr.integer("offset", 0, 0, 1<<31-1)
	if kr.err != nil {
		c.fail(w, kr.err)
		return
	}
	k, count := kr.key, kr.count
	v, err := s.do("DELAY.RANGE", k, "0", strconv.FormatInt(1<<62, 10), "LIMIT", strconv.FormatInt(offset, 10),
		strconv.Itoa(count))
	if err != nil {
		c.fail(w, err)
		return
	}
	timers := make([]map[string]any, 0, len(v.Elems))
	for _, it := range v.Elems {
		if len(it.Elems) != 2 {
			c.fail(w, fmt.Errorf("unexpected DELAY.RANGE item %s", it))
			return
		}
		timers = append(timers, map[string]any{"member": it.Elems[0].Str, "due": it.Elems[1].Int})
	}
	writeJSON(w, http.StatusOK, map[string]any{"timers": timers})
}
