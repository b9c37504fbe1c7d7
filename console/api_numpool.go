package console

import (
	"fmt"
	"net/http"

	"github.com/revolver-db/revolver/resp"
)

// NUMPOOL's part of the console: a pool's numbers per state
// (NUMPOOL.INFO) and its numbers by cursor (NUMPOOL.LIST).

func init() {
	registerFamily(&family{
		name:    "numpool",
		summary: func(key string) [][]string { return [][]string{{"NUMPOOL.INFO", key}} },
		describe: func(rs []resp.Value, now int64) (map[string]any, error) {
			m, err := numbers(rs[0])
			if err != nil {
				return nil, err
			}
			tags := []string{} // NUMPOOL.INFO's tags are an array
			for i := 0; i+1 < len(rs[0].Elems); i += 2 {
				if rs[0].Elems[i].Str == "tags" {
					for _, t := range rs[0].Elems[i+1].Elems {
						tags = append(tags, t.Str)
					}
				}
			}
			m["tags"] = tags
			return m, nil
		},
	})
}

// numpoolNumbers is GET /api/numpool/numbers: a page of a pool's numbers
// and their states, optionally of one state.
func (c *Console) numpoolNumbers(w http.ResponseWriter, r *http.Request, s *session) {
	kr := readKeyRequest(r, s, "numpool")
	state := kr.str("state", false)
	if kr.err != nil {
		c.fail(w, kr.err)
		return
	}
	k, cursor, count := kr.key, kr.cursor, kr.count
	args := []string{"NUMPOOL.LIST", k, "CURSOR", cursor, "COUNT", fmt.Sprint(count)}
	if state != "" {
		args = append(args, "STATE", state)
	}
	v, err := s.do(args...)
	if err != nil {
		if isReplyError(err, "ERR invalid cursor") || isReplyError(err, "ERR STATE") {
			err = badRequest("%s", err.Error())
		}
		c.fail(w, err)
		return
	}
	if len(v.Elems) != 2 {
		c.fail(w, fmt.Errorf("unexpected NUMPOOL.LIST reply %s", v))
		return
	}
	items := v.Elems[1].Elems
	nums := make([]map[string]any, 0, len(items)/2)
	for i := 0; i+1 < len(items); i += 2 {
		nums = append(nums, map[string]any{"number": items[i].Str, "state": items[i+1].Str})
	}
	writeJSON(w, http.StatusOK, map[string]any{"cursor": v.Elems[0].Str, "numbers": nums})
}
