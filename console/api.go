package console

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/revolver-db/revolver/resp"
)

// The JSON API the pages read: key lists by SCAN, one key's description,
// and each family's listings and actions (api_<family>.go). Every request
// runs commands over its session; a page of keys is one SCAN step at a
// time and one pipeline of short per-key commands, so no request holds the
// engine lock for long however big the keyspace.

// family is a native family's part of the API.
type family struct {
	name string // TYPE's name of its keys, as SCAN ... TYPE takes it
	// summary returns the commands that describe one key; describe reads
	// their replies (now is the server's clock, unix ms).
	summary  func(key string) [][]string
	describe func(replies []resp.Value, now int64) (map[string]any, error)
	// config, when set, returns the command whose reply (name, value
	// pairs) is the key's settings, shown on its page.
	config func(key string) []string
}

var families = map[string]*family{}

func registerFamily(f *family) { families[f.name] = f }

// apiError is a request the API refuses, with its HTTP status.
type apiError struct {
	status int
	msg    string
}

func (e *apiError) Error() string { return e.msg }

func badRequest(format string, a ...any) error {
	return &apiError{http.StatusBadRequest, fmt.Sprintf(format, a...)}
}

// fail answers err: an apiError with its status, an error reply by its
// code (WRONGTYPE 409, NOPERM 403, BUSY and LOADING 503, any other 400),
// anything else (the connection broke) 503.
func (c *Console) fail(w http.ResponseWriter, err error) {
	var ae *apiError
	var re *replyError
	switch {
	case errors.As(err, &ae):
		httpError(w, ae.status, ae.msg)
	case errors.As(err, &re):
		status := http.StatusBadRequest
		switch code, _, _ := strings.Cut(re.msg, " "); code {
		case "WRONGTYPE":
			status = http.StatusConflict
		case "NOPERM", "NOAUTH":
			status = http.StatusForbidden
		case "BUSY", "LOADING", "MASTERDOWN", "OOM", "MISCONF":
			status = http.StatusServiceUnavailable
		}
		httpError(w, status, re.msg)
	default:
		httpError(w, http.StatusServiceUnavailable, err.Error())
	}
}

// query reads a request's parameters strictly.
type query struct {
	r   *http.Request
	err error
}

func (q *query) str(name string, required bool) string {
	v := q.r.FormValue(name)
	if v == "" && required && q.err == nil {
		q.err = badRequest("missing parameter %q", name)
	}
	return v
}

// binary reads a parameter that names a key or a job id as the pages got
// it from keyText.
func (q *query) binary(name string) string { return textKey(q.str(name, true)) }

func (q *query) integer(name string, def, lo, hi int64) int64 {
	v := q.r.FormValue(name)
	if v == "" {
		return def
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if (err != nil || n < lo || n > hi) && q.err == nil {
		q.err = badRequest("parameter %q must be an integer from %d to %d", name, lo, hi)
	}
	return n
}

func (q *query) family() *family {
	name := q.str("type", true)
	f := families[name]
	if f == nil && q.err == nil {
		q.err = badRequest("unknown type %q", name)
	}
	return f
}

// pageSize is the page size: 1 to 1000, 50 by default.
func (q *query) pageSize() int { return int(q.integer("count", 50, 1, 1000)) }

// selectDB switches the session to the request's database (db, 0 by
// default).
func (q *query) selectDB(s *session) {
	db := q.integer("db", 0, 0, 1<<31-1)
	if q.err != nil || db == 0 {
		return
	}
	if _, err := s.do("SELECT", strconv.FormatInt(db, 10)); err != nil {
		q.err = badRequest("%s", err.Error())
	}
}

// serverNow is the server's clock in unix ms (TIME), the clock due times
// and lease ends are told by.
func serverNow(s *session) (int64, error) {
	v, err := s.do("TIME")
	if err != nil {
		return 0, err
	}
	if len(v.Elems) != 2 {
		return 0, fmt.Errorf("unexpected TIME reply %s", v)
	}
	sec, err1 := strconv.ParseInt(v.Elems[0].Str, 10, 64)
	usec, err2 := strconv.ParseInt(v.Elems[1].Str, 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("unexpected TIME reply %s", v)
	}
	return sec*1000 + usec/1000, nil
}

// scanBudget bounds the SCAN steps of one key-list request: past it the
// page returns what it found with the cursor to go on from.
const scanBudget = 100 * time.Millisecond

// scanStep is SCAN's COUNT per step: one step holds the lock for at most
// this many keys' worth of work (about 0.1 ms; a step of 1000 took 0.5 ms
// and up to 4 ms with TYPE's filter on 200k keys).
const scanStep = "250"

// scanStepKeys is scanStep as a number: a step visits about that many
// keys, which the page shows as its progress.
const scanStepKeys = 250

// summaryBatch is how many keys' commands go in one pipeline: a loop runs
// a client's whole pipeline under one hold of the engine lock.
const summaryBatch = 16

// keys is GET /api/keys: the keys of one native family, a page at a time.
func (c *Console) keys(w http.ResponseWriter, r *http.Request, s *session) {
	q := &query{r: r}
	f := q.family()
	cursor := q.str("cursor", false)
	if cursor == "" {
		cursor = "0"
	}
	want := q.pageSize()
	match := q.str("match", false)
	q.selectDB(s)
	if q.err != nil {
		c.fail(w, q.err)
		return
	}
	var found []string
	scanned, start := 0, time.Now()
	for {
		args := []string{"SCAN", cursor}
		if match != "" {
			args = append(args, "MATCH", match)
		}
		args = append(args, "COUNT", scanStep, "TYPE", f.name)
		v, err := s.do(args...)
		if err != nil {
			if isReplyError(err, "ERR invalid cursor") {
				err = badRequest("invalid cursor")
			}
			c.fail(w, err)
			return
		}
		if len(v.Elems) != 2 {
			c.fail(w, fmt.Errorf("unexpected SCAN reply %s", v))
			return
		}
		cursor = v.Elems[0].Str
		for _, k := range v.Elems[1].Elems {
			found = append(found, k.Str)
		}
		scanned++
		if cursor == "0" || len(found) >= want || time.Since(start) > scanBudget {
			break
		}
	}
	now, err := serverNow(s)
	if err != nil {
		c.fail(w, err)
		return
	}
	// A step visits about scanStepKeys keys; a small database has fewer.
	visited := int64(scanned * scanStepKeys)
	if v, err := s.do("DBSIZE"); err == nil {
		visited = min(visited, v.Int)
	}
	rows := make([]map[string]any, 0, len(found))
	for i := 0; i < len(found); i += summaryBatch {
		batch := found[i:min(i+summaryBatch, len(found))]
		descs, err := describeKeys(s, f, batch, now)
		if err != nil {
			c.fail(w, err)
			return
		}
		for j, k := range batch {
			if descs[j] != nil { // nil: the key went away meanwhile
				rows = append(rows, map[string]any{"key": keyText(k), "summary": descs[j]})
			}
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"type": f.name, "db": q.integer("db", 0, 0, 1<<31-1),
		"cursor": cursor, "scanned": visited, "keys": rows})
}

// describeKeys runs the family's summary commands for keys in one pipeline
// and reads each key's; a key whose commands failed (deleted or replaced
// since SCAN saw it) gets nil.
func describeKeys(s *session, f *family, keys []string, now int64) ([]map[string]any, error) {
	var cmds [][]string
	per := 0
	for _, k := range keys {
		cs := f.summary(k)
		per = len(cs)
		cmds = append(cmds, cs...)
	}
	replies, err := s.pipeline(cmds...)
	if err != nil {
		return nil, err
	}
	out := make([]map[string]any, len(keys))
	for i := range keys {
		rs := replies[i*per : (i+1)*per]
		failed := false
		for _, v := range rs {
			if v.Kind == resp.KindError {
				failed = true
			}
		}
		if failed {
			continue
		}
		if out[i], err = f.describe(rs, now); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// key is GET /api/key: one key's summary and settings. 404 when there is
// no such key, 409 when it is not of the family.
func (c *Console) key(w http.ResponseWriter, r *http.Request, s *session) {
	q := &query{r: r}
	f := q.family()
	k := q.binary("key")
	q.selectDB(s)
	if q.err == nil {
		q.err = checkType(s, f, k)
	}
	if q.err != nil {
		c.fail(w, q.err)
		return
	}
	now, err := serverNow(s)
	if err != nil {
		c.fail(w, err)
		return
	}
	replies, err := s.pipeline(f.summary(k)...)
	if err == nil {
		for _, v := range replies {
			if err = errorReply(v); err != nil {
				break
			}
		}
	}
	var sum map[string]any
	if err == nil {
		sum, err = f.describe(replies, now)
	}
	if err != nil {
		c.fail(w, err)
		return
	}
	out := map[string]any{"type": f.name, "db": q.integer("db", 0, 0, 1<<31-1), "key": keyText(k), "summary": sum}
	if f.config != nil {
		// QUEUE.CONFIG is a write command even when it only shows: a user
		// who may only read sees the page without the settings.
		v, err := s.do(f.config(k)...)
		switch {
		case isReplyError(err, "NOPERM"):
		case err != nil:
			c.fail(w, err)
			return
		default:
			conf, err := pairs(v)
			if err != nil {
				c.fail(w, err)
				return
			}
			out["config"] = conf
		}
	}
	writeJSON(w, http.StatusOK, out)
}

// keyRequest is a request about one key of a family: its db (selected
// on the session), the key, and for listings a cursor and a page size.
type keyRequest struct {
	*query
	key, cursor string
	count       int
}

// readKeyRequest reads db, key, cursor ("0" by default) and count, and
// checks the key is of the family; the error is in kr.err.
func readKeyRequest(r *http.Request, s *session, fam string) *keyRequest {
	kr := &keyRequest{query: &query{r: r}}
	kr.key = kr.binary("key")
	if kr.cursor = kr.str("cursor", false); kr.cursor == "" {
		kr.cursor = "0"
	}
	kr.count = kr.pageSize()
	kr.selectDB(s)
	if kr.err == nil {
		kr.err = checkType(s, families[fam], kr.key)
	}
	return kr
}

// checkType refuses a key that is absent (404) or of another type (409).
func checkType(s *session, f *family, key string) error {
	v, err := s.do("TYPE", key)
	switch {
	case err != nil:
		return err
	case v.Str == "none":
		return &apiError{http.StatusNotFound, "no such key"}
	case v.Str != f.name:
		return &apiError{http.StatusConflict, fmt.Sprintf("key holds a %s, not a %s", v.Str, f.name)}
	}
	return nil
}

// numbers turns a (name, value) reply into JSON: names as identifiers
// (oldest-ready-age -> oldest_ready_age, idle+up -> idle_up), integer
// values as numbers.
func numbers(v resp.Value) (map[string]any, error) {
	m, err := pairs(v)
	if err != nil {
		return nil, err
	}
	out := make(map[string]any, len(m))
	for k, val := range m {
		name := strings.NewReplacer("-", "_", "+", "_").Replace(k)
		if n, err := strconv.ParseInt(val, 10, 64); err == nil {
			out[name] = n
		} else {
			out[name] = val
		}
	}
	return out, nil
}
