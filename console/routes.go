package console

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
)

// routes registers every endpoint. Pages are static files (static.go);
// what they show comes from the JSON API below.
func (c *Console) routes() {
	c.mux.Handle("GET /api/overview", c.handler(c.overview))
	c.mux.Handle("GET /events", c.handler(c.events))
	c.mux.Handle("GET /api/keys", c.handler(c.keys))
	c.mux.Handle("GET /api/key", c.handler(c.key))
	c.mux.Handle("GET /api/queue/inflight", c.handler(c.queueInflight))
	c.mux.Handle("GET /api/queue/dead", c.handler(c.queueDead))
	c.mux.Handle("GET /api/queue/ready", c.handler(c.queueReady))
	c.mux.Handle("POST /api/queue/retry", c.action(c.queueRetry))
	c.mux.Handle("POST /api/queue/delete", c.action(c.queueDelete))
	c.mux.Handle("GET /api/delay/timers", c.handler(c.delayTimers))
	c.mux.Handle("GET /api/numpool/numbers", c.handler(c.numpoolNumbers))
	c.mux.Handle("GET /api/room/members", c.handler(c.roomMembers))
	unknown := c.handler(func(w http.ResponseWriter, r *http.Request, s *session) {
		httpError(w, http.StatusNotFound, "no such endpoint (or not with "+r.Method+")")
	})
	c.mux.Handle("GET /api/", unknown)
	c.mux.Handle("POST /api/", unknown)
	c.mux.Handle("GET /metrics", c.metricsHandler())
	c.mux.Handle("GET /", c.staticHandler())
}

// actionHeader must be on every request that changes something: a page of
// another site cannot set it without a CORS preflight, which the console
// never grants, so a browser holding the console's credentials cannot be
// made to act by another site.
const actionHeader = "X-Revolver-Console"

// maxForm bounds an action's form body.
const maxForm = 64 << 10

// action wraps an endpoint that changes data: the guard header, a
// same-origin Origin when the browser sends one, a bounded form body.
func (c *Console) action(fn func(w http.ResponseWriter, r *http.Request, s *session)) http.HandlerFunc {
	inner := c.handler(fn)
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get(actionHeader) != "1" {
			httpError(w, http.StatusForbidden, "actions need the header "+actionHeader+": 1")
			return
		}
		if o := r.Header.Get("Origin"); o != "" {
			if u, err := url.Parse(o); err != nil || u.Host != r.Host {
				httpError(w, http.StatusForbidden, "cross-origin action refused")
				return
			}
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxForm)
		if err := r.ParseForm(); err != nil {
			httpError(w, http.StatusBadRequest, "malformed form: "+err.Error())
			return
		}
		inner(w, r)
	}
}

// jsonLine writes v as one line of JSON (an SSE data line).
func jsonLine(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}
