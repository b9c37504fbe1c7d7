package console

import (
	"fmt"
	"net/http"

	"github.com/revolver-db/revolver/resp"
)

// ROOM's part of the console: a room's messages, online users, UV and
// blocked pullers (ROOM.INFO), and its members by cursor (ROOM.MEMBERS).

func init() {
	registerFamily(&family{
		name:    "room",
		summary: func(key string) [][]string { return [][]string{{"ROOM.INFO", key}} },
		describe: func(rs []resp.Value, now int64) (map[string]any, error) {
			return numbers(rs[0])
		},
	})
}

// roomMembers is GET /api/room/members: a page of the users online.
func (c *Console) roomMembers(w http.ResponseWriter, r *http.Request, s *session) {
	kr := readKeyRequest(r, s, "room")
	if kr.err != nil {
		c.fail(w, kr.err)
		return
	}
	k, cursor, count := kr.key, kr.cursor, kr.count
	v, err := s.do("ROOM.MEMBERS", k, "CURSOR", cursor, "COUNT", fmt.Sprint(count))
	if err != nil {
		if isReplyError(err, "ERR invalid cursor") {
			err = badRequest("invalid cursor")
		}
		c.fail(w, err)
		return
	}
	if len(v.Elems) != 2 {
		c.fail(w, fmt.Errorf("unexpected ROOM.MEMBERS reply %s", v))
		return
	}
	members := make([]string, 0, len(v.Elems[1].Elems))
	for _, m := range v.Elems[1].Elems {
		members = append(members, m.Str)
	}
	writeJSON(w, http.StatusOK, map[string]any{"cursor": v.Elems[0].Str, "members": members})
}
