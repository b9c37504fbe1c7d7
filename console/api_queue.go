package console

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/revolver-db/revolver/resp"
)

// QUEUE's part of the console: a queue's counts (QUEUE.STATS), its
// settings (QUEUE.CONFIG), the jobs in flight and dead by cursor, the next
// ready ones, and the dead-letter actions RETRY and DELETE.

func init() {
	registerFamily(&family{
		name:    "queue",
		summary: func(key string) [][]string { return [][]string{{"QUEUE.STATS", key}} },
		describe: func(rs []resp.Value, now int64) (map[string]any, error) {
			m, err := numbers(rs[0])
			if err == nil {
				m["oldest_ready_age_ms"] = m["oldest_ready_age"]
				delete(m, "oldest_ready_age")
			}
			return m, err
		},
		config: func(key string) []string { return []string{"QUEUE.CONFIG", key} },
	})
}

// queueInflight is GET /api/queue/inflight: a page of jobs in flight,
// earliest lease end first.
func (c *Console) queueInflight(w http.ResponseWriter, r *http.Request, s *session) {
	c.jobPage(w, r, s, "QUEUE.INFLIGHT", 5, func(e []resp.Value) map[string]any {
		return map[string]any{"id": keyText(e[0].Str), "consumer": e[1].Str, "attempt": e[2].Int,
			"lease_left_ms": e[3].Int, "receipt": e[4].Str}
	})
}

// queueDead is GET /api/queue/dead: a page of dead jobs, oldest death
// first.
func (c *Console) queueDead(w http.ResponseWriter, r *http.Request, s *session) {
	c.jobPage(w, r, s, "QUEUE.DEAD", 4, func(e []resp.Value) map[string]any {
		return map[string]any{"id": keyText(e[0].Str), "payload": e[1].Str, "attempt": e[2].Int,
			"reason": e[3].Str}
	})
}

// jobPage answers a page of a paged job listing (cmd key CURSOR c COUNT n),
// each item width fields long and turned into JSON by job.
func (c *Console) jobPage(w http.ResponseWriter, r *http.Request, s *session, cmd string, width int,
	job func(e []resp.Value) map[string]any) {
	kr := readKeyRequest(r, s, "queue")
	if kr.err != nil {
		c.fail(w, kr.err)
		return
	}
	next, items, err := page(s, cmd, kr.key, kr.cursor, kr.count)
	if err != nil {
		c.fail(w, err)
		return
	}
	jobs := make([]map[string]any, 0, len(items))
	for _, it := range items {
		if len(it.Elems) != width {
			c.fail(w, fmt.Errorf("unexpected %s item %s", cmd, it))
			return
		}
		jobs = append(jobs, job(it.Elems))
	}
	writeJSON(w, http.StatusOK, map[string]any{"cursor": next, "jobs": jobs})
}

// queueReady is GET /api/queue/ready: the next jobs POPACK would serve.
func (c *Console) queueReady(w http.ResponseWriter, r *http.Request, s *session) {
	kr := readKeyRequest(r, s, "queue")
	if kr.err != nil {
		c.fail(w, kr.err)
		return
	}
	v, err := s.do("QUEUE.PEEK", kr.key, "COUNT", fmt.Sprint(kr.count))
	if err != nil {
		c.fail(w, err)
		return
	}
	jobs := make([]map[string]any, 0, len(v.Elems))
	for _, it := range v.Elems {
		if len(it.Elems) != 4 {
			c.fail(w, fmt.Errorf("unexpected QUEUE.PEEK item %s", it))
			return
		}
		e := it.Elems
		jobs = append(jobs, map[string]any{"id": keyText(e[0].Str), "payload": e[1].Str, "priority": e[2].Int,
			"attempt": e[3].Int})
	}
	writeJSON(w, http.StatusOK, map[string]any{"jobs": jobs})
}

// page runs a paged listing (cmd key CURSOR c COUNT n) and returns the
// next cursor and the items.
func page(s *session, cmd, key, cursor string, count int) (string, []resp.Value, error) {
	v, err := s.do(cmd, key, "CURSOR", cursor, "COUNT", fmt.Sprint(count))
	if err != nil {
		if isReplyError(err, "ERR invalid cursor") {
			err = badRequest("invalid cursor")
		}
		return "", nil, err
	}
	if len(v.Elems) != 2 {
		return "", nil, fmt.Errorf("unexpected %s reply %s", cmd, v)
	}
	return v.Elems[0].Str, v.Elems[1].Elems, nil
}

// queueRetry is POST /api/queue/retry: QUEUE.RETRY key id, a dead job
// made ready again.
func (c *Console) queueRetry(w http.ResponseWriter, r *http.Request, s *session) {
	c.queueAction(w, r, s, "QUEUE.RETRY", "retried", "no dead job with that id", true)
}

// queueDelete is POST /api/queue/delete: QUEUE.DEL key id.
func (c *Console) queueDelete(w http.ResponseWriter, r *http.Request, s *session) {
	c.queueAction(w, r, s, "QUEUE.DEL", "deleted", "no job with that id", false)
}

func (c *Console) queueAction(w http.ResponseWriter, r *http.Request, s *session, cmd, done, none string, allWord bool) {
	kr := readKeyRequest(r, s, "queue")
	id := kr.binary("id")
	if allWord && strings.EqualFold(id, "ALL") && kr.err == nil {
		// QUEUE.RETRY's word for every dead job: the console's buttons
		// name one job.
		kr.err = badRequest("id %q names every job; the console acts on one at a time", id)
	}
	if kr.err != nil {
		c.fail(w, kr.err)
		return
	}
	k := kr.key
	v, err := s.do(cmd, k, id)
	if err != nil {
		c.fail(w, err)
		return
	}
	if v.Int == 0 {
		httpError(w, http.StatusNotFound, none)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{done: v.Int, "id": keyText(id), "key": keyText(k)})
}
