// Package console is Revolver's HTTP face for operators: Prometheus
// metrics at /metrics and a web console at / (issue 35). It is a client of
// the server like any other: every read and action is a command sent over
// a connection the server serves as a client's (Backend.Dial), so it is
// checked against the user's ACL, persisted, propagated, shown by MONITOR
// and counted in INFO, and each holds the engine lock only as long as that
// command does. The few figures no command returns (the native keys'
// sizes for the metrics' top keys) are read in bounded steps through
// Backend.View.
package console

import (
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"strings"
	"sync/atomic"

	"github.com/revolver-db/revolver/engine"
)

// Backend is what the console needs of the server.
type Backend interface {
	// Dial opens a connection the server serves as a client's, for a
	// request from peer (the HTTP client's address, which CLIENT LIST
	// shows and protected mode judges).
	Dial(peer, local string) (net.Conn, error)
	// AuthRequired says whether a client must authenticate (requirepass
	// or a default user with passwords): then every request must.
	AuthRequired() bool
	// View runs fn under the engine lock. fn must do a bounded amount of
	// work (the console's steps visit at most a few hundred keys).
	View(fn func(e *engine.Engine))
}

// Options are the console's settings (CONFIG SET may change them while it
// runs).
type Options struct {
	// TopKeys is how many keys of each native family get per-key series
	// in /metrics (metrics-top-keys); the rest are summed.
	TopKeys int
}

// Console serves the HTTP endpoints.
type Console struct {
	b    Backend
	opts atomic.Pointer[Options]
	mux  *http.ServeMux
}

// New makes a console over the server b.
func New(b Backend, opts Options) *Console {
	c := &Console{b: b, mux: http.NewServeMux()}
	c.opts.Store(&opts)
	c.routes()
	return c
}

// SetOptions changes the console's settings.
func (c *Console) SetOptions(opts Options) { c.opts.Store(&opts) }

func (c *Console) options() Options { return *c.opts.Load() }

// ServeHTTP implements http.Handler.
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("X-Frame-Options", "DENY")
	c.mux.ServeHTTP(w, r)
}

// session is one request's connection to the server, authenticated as the
// request's user.
type session struct {
	*client
	user string
}

// errUnauthorized: the request named no credentials, or wrong ones.
var errUnauthorized = errors.New("unauthorized")

// open connects for r and authenticates with its credentials: HTTP basic
// auth (user and password, as AUTH user pass) or a bearer token (the
// default user's password, as AUTH pass). Without credentials the
// connection is the default user's, refused when it needs a password.
func (c *Console) open(r *http.Request) (*session, error) {
	user, pass, basic := r.BasicAuth()
	token, bearer := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !basic && !bearer && c.b.AuthRequired() {
		return nil, errUnauthorized
	}
	nc, err := c.b.Dial(r.RemoteAddr, localAddr(r))
	if err != nil {
		return nil, err
	}
	s := &session{client: newClient(nc), user: "default"}
	switch {
	case basic:
		if user == "" {
			user = "default"
		}
		_, err = s.do("AUTH", user, pass)
		s.user = user
	case bearer:
		_, err = s.do("AUTH", token)
	default:
		// A first command proves the server let the connection in
		// (protected mode answers -DENIED and closes it).
		_, err = s.do("PING")
	}
	if err != nil {
		s.close()
		if isReplyError(err, "WRONGPASS") || isReplyError(err, "NOAUTH") {
			return nil, errUnauthorized
		}
		return nil, err
	}
	return s, nil
}

func localAddr(r *http.Request) string {
	if a, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
		return a.String()
	}
	return ""
}

// handler wraps an endpoint that needs a session: it opens one, answers
// 401 or 403 when the server refuses it, and closes it afterwards.
func (c *Console) handler(fn func(w http.ResponseWriter, r *http.Request, s *session)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s, err := c.open(r)
		if err != nil {
			c.refuse(w, err)
			return
		}
		defer s.close()
		fn(w, r, s)
	}
}

// refuse answers a request the server would not serve.
func (c *Console) refuse(w http.ResponseWriter, err error) {
	switch {
	case errors.Is(err, errUnauthorized):
		w.Header().Set("WWW-Authenticate", `Basic realm="Revolver", charset="UTF-8"`)
		httpError(w, http.StatusUnauthorized, "authentication required")
	case isReplyError(err, "DENIED"), isReplyError(err, "NOPERM"):
		httpError(w, http.StatusForbidden, err.Error())
	default:
		httpError(w, http.StatusServiceUnavailable, err.Error())
	}
}

// httpError answers status with a JSON body {"error": msg}.
func httpError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"error": msg})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(true)
	enc.Encode(v)
}
