package tests

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/revolver-db/revolver/server"
)

// The console's JSON API (console/api*.go) over HTTP against a server
// holding every native family: each endpoint's answer, bad input refused
// with a clear 4xx and nothing changed, auth and ACL refusals, the action
// guard.

// startConsole starts a server with its console on a free port and
// returns it and the console's base URL.
func startConsole(t testing.TB, opts ...serverOpt) (*server.Server, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	srv := startServer(t, append(opts, withConfig("http-port", strconv.Itoa(port)))...)
	if srv.HTTPAddr() == "" {
		t.Fatal("the console does not listen")
	}
	return srv, "http://" + srv.HTTPAddr()
}

// httpDo sends a request and returns the status and the decoded JSON body
// (nil when it is not JSON).
func httpDo(t testing.TB, method, u string, form url.Values, hdr map[string]string) (int, map[string]any) {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, u, body)
	if err != nil {
		t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	var out map[string]any
	if json.Unmarshal(raw, &out) != nil {
		out = nil
	}
	return res.StatusCode, out
}

// seedFamilies gives the server a key of each native family, a queue
// with a job ready, one in flight and one dead, and a plain string.
func seedFamilies(t testing.TB, c *redis.Client) {
	t.Helper()
	ctx := context.Background()
	for _, cmd := range [][]any{
		{"QUEUE.PUSH", "jobs", "a", "ID", "r1"},
		{"QUEUE.PUSH", "jobs", "b", "ID", "f1"},
		{"QUEUE.PUSH", "jobs", "c", "ID", "d1", "MAXATTEMPTS", "1", "PRIORITY", "9"},
		{"QUEUE.POPACK", "jobs", "worker", "LEASE", "60000"}, // d1 (priority 9)
		{"DELAY.ADD", "timers", "t1", "IN", "60000", "PAYLOAD", "x"},
		{"NUMPOOL.ADD", "pool", "100", "101"},
		{"NUMPOOL.REG", "pool", "100"},
		{"ROOM.HEARTBEAT", "room", "u1", "u2"},
		{"ROOM.PUB", "room", "hello"},
		{"SET", "plain", "v"},
	} {
		if err := c.Do(ctx, cmd...).Err(); err != nil {
			t.Fatalf("%v: %v", cmd, err)
		}
	}
	// d1 in flight goes dead with its receipt handed back past its only
	// attempt.
	jobs := c.Do(ctx, "QUEUE.INFLIGHT", "jobs").Val().([]any)
	receipt := jobs[0].([]any)[4].(string)
	if err := c.Do(ctx, "QUEUE.NACK", "jobs", receipt).Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.Do(ctx, "QUEUE.POPACK", "jobs", "worker", "LEASE", "60000").Err(); err != nil {
		t.Fatal(err)
	}
}

func TestConsoleAPI(t *testing.T) {
	srv, base := startConsole(t)
	c := goRedis(t, srv.Addr(), 2)
	ctx := context.Background()
	seedFamilies(t, c)
	stats := func() string { // the counts, not the ages
		s := c.Do(ctx, "QUEUE.STATS", "jobs").String()
		return s[:strings.Index(s, "oldest-ready-age")]
	}

	for _, tc := range []struct {
		path   string
		status int
		want   []string // substrings of the JSON body
	}{
		{"/api/keys?type=queue", 200, []string{`"key":"jobs"`, `"dead":1`, `"inflight":1`, `"ready":1`}},
		{"/api/keys?type=delay", 200, []string{`"key":"timers"`, `"pending":1`, `"next_member":"t1"`}},
		{"/api/keys?type=numpool", 200, []string{`"key":"pool"`, `"idle_up":1`, `"idle_down":1`}},
		{"/api/keys?type=room", 200, []string{`"key":"room"`, `"online":2`, `"nseq":1`}},
		{"/api/keys?type=queue&match=nomatch*", 200, []string{`"keys":[]`, `"cursor":"0"`}},
		{"/api/key?type=queue&key=jobs", 200, []string{`"lease":"30000"`, `"dead_lettered":1`}},
		{"/api/queue/inflight?key=jobs", 200, []string{`"consumer":"worker"`, `"id":"r1"`}},
		{"/api/queue/dead?key=jobs", 200, []string{`"id":"d1"`, `"reason":"max attempts"`}},
		{"/api/queue/ready?key=jobs", 200, []string{`"id":"f1"`}},
		{"/api/delay/timers?key=timers", 200, []string{`"member":"t1"`}},
		{"/api/numpool/numbers?key=pool&state=idle%2Bup", 200, []string{`"number":"100"`}},
		{"/api/room/members?key=room", 200, []string{`"u1"`, `"u2"`}},
		// Bad input: a clear 4xx.
		{"/api/keys", 400, []string{`missing parameter \"type\"`}},
		{"/api/keys?type=list", 400, []string{`unknown type`}},
		{"/api/keys?type=queue&count=0", 400, []string{`count`}},
		{"/api/keys?type=queue&count=x", 400, []string{`count`}},
		{"/api/keys?type=queue&db=x", 400, []string{`db`}},
		{"/api/keys?type=queue&db=99", 400, []string{`DB index is out of range`}},
		{"/api/keys?type=queue&cursor=zz", 400, []string{`invalid cursor`}},
		{"/api/key?type=queue&key=nokey", 404, []string{`no such key`}},
		{"/api/key?type=queue&key=plain", 409, []string{`key holds a string, not a queue`}},
		{"/api/key?type=room&key=jobs", 409, []string{`key holds a queue, not a room`}},
		{"/api/queue/dead?key=jobs&cursor=x", 400, []string{`invalid cursor`}},
		{"/api/queue/inflight?key=jobs&cursor=1.2", 400, []string{`invalid cursor`}},
		{"/api/queue/inflight", 400, []string{`missing parameter \"key\"`}},
		{"/api/numpool/numbers?key=pool&state=bogus", 400, []string{`STATE`}},
		{"/api/delay/timers?key=timers&offset=-1", 400, []string{`offset`}},
	} {
		code, body := httpDo(t, "GET", base+tc.path, nil, nil)
		raw, _ := json.Marshal(body)
		if code != tc.status {
			t.Errorf("GET %s: status %d, want %d (%s)", tc.path, code, tc.status, raw)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(string(raw), w) {
				t.Errorf("GET %s: %s lacks %s", tc.path, raw, w)
			}
		}
	}

	// Actions: refused without the guard header, from another origin,
	// with a bad form; nothing changes meanwhile.
	before := stats()
	guard := map[string]string{"X-Revolver-Console": "1"}
	for _, tc := range []struct {
		path   string
		form   url.Values
		hdr    map[string]string
		status int
	}{
		{"/api/queue/retry", url.Values{"key": {"jobs"}, "id": {"d1"}}, nil, 403},
		{"/api/queue/retry", url.Values{"key": {"jobs"}, "id": {"d1"}},
			map[string]string{"X-Revolver-Console": "1", "Origin": "http://evil.example"}, 403},
		{"/api/queue/retry", url.Values{"key": {"jobs"}}, guard, 400},
		{"/api/queue/retry", url.Values{"key": {"jobs"}, "id": {"ALL"}}, guard, 400},
		{"/api/queue/retry", url.Values{"key": {"jobs"}, "id": {"r1"}}, guard, 404}, // in flight, not dead
		{"/api/queue/retry", url.Values{"key": {"plain"}, "id": {"d1"}}, guard, 409},
		{"/api/queue/retry", url.Values{"key": {"jobs"}, "id": {"d1"}, "db": {"-1"}}, guard, 400},
		{"/api/queue/delete", url.Values{"key": {"jobs"}, "id": {"nosuch"}}, guard, 404},
	} {
		if code, body := httpDo(t, "POST", base+tc.path, tc.form, tc.hdr); code != tc.status {
			t.Errorf("POST %s %v: status %d, want %d (%v)", tc.path, tc.form, code, tc.status, body)
		}
	}
	if code, _ := httpDo(t, "GET", base+"/api/queue/retry?key=jobs&id=d1", nil, guard); code != 404 {
		t.Errorf("GET of an action: %d", code)
	}
	if after := stats(); after != before {
		t.Fatalf("refused actions changed the queue:\n%s\n%s", before, after)
	}

	// RETRY moves the dead job to ready; DELETE removes it, as the
	// commands would, and MONITOR-visible commands ran on the server.
	if code, body := httpDo(t, "POST", base+"/api/queue/retry", url.Values{"key": {"jobs"}, "id": {"d1"}}, guard); code != 200 || body["retried"] != 1.0 {
		t.Fatalf("retry: %d %v", code, body)
	}
	if st := c.Do(ctx, "QUEUE.GET", "jobs", "d1").Val().([]any); st[3] != "ready" {
		t.Fatalf("d1 after RETRY: %v", st)
	}
	if code, body := httpDo(t, "POST", base+"/api/queue/delete", url.Values{"key": {"jobs"}, "id": {"d1"}}, guard); code != 200 || body["deleted"] != 1.0 {
		t.Fatalf("delete: %d %v", code, body)
	}
	if n := c.Do(ctx, "QUEUE.LEN", "jobs").Val(); n != int64(2) {
		t.Fatalf("QUEUE.LEN after delete: %v", n)
	}
	cmdstats := c.Info(ctx, "commandstats").Val()
	for _, cmd := range []string{"cmdstat_queue.retry:calls=", "cmdstat_queue.del:calls="} {
		if !strings.Contains(cmdstats, cmd) {
			t.Errorf("INFO commandstats lacks %s", cmd)
		}
	}
}

// TestConsoleAuth: with requirepass every endpoint needs credentials
// (basic auth or a bearer token), and an ACL user gets the console as its
// permissions allow.
func TestConsoleAuth(t *testing.T) {
	srv, base := startConsole(t, withConfig("requirepass", "s3cret"))
	c := redis.NewClient(&redis.Options{Addr: srv.Addr(), Password: "s3cret", Protocol: 2})
	t.Cleanup(func() { c.Close() })
	ctx := context.Background()
	seedFamilies(t, c)
	if err := c.Do(ctx, "ACL", "SETUSER", "viewer", "on", ">viewpw", "~*", "+@read", "+select", "+scan",
		"+info", "+time", "+type", "+ping").Err(); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/", "/api/overview", "/api/keys?type=queue", "/events", "/api/key?type=queue&key=jobs"} {
		if code, _ := httpDo(t, "GET", base+path, nil, nil); code != 401 {
			t.Errorf("GET %s without credentials: %d", path, code)
		}
		req, _ := http.NewRequest("GET", base+path, nil)
		req.SetBasicAuth("default", "wrong")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != 401 || !strings.HasPrefix(res.Header.Get("WWW-Authenticate"), "Basic") {
			t.Errorf("GET %s with a wrong password: %d %q", path, res.StatusCode, res.Header.Get("WWW-Authenticate"))
		}
	}
	if code, _ := httpDo(t, "POST", base+"/api/queue/retry", url.Values{"key": {"jobs"}, "id": {"d1"}},
		map[string]string{"X-Revolver-Console": "1"}); code != 401 {
		t.Errorf("action without credentials: %d", code)
	}
	if code, _ := httpDo(t, "GET", base+"/api/keys?type=queue", nil, map[string]string{"Authorization": "Bearer s3cret"}); code != 200 {
		t.Errorf("bearer token: %d", code)
	}
	basic := func(user, pass string) map[string]string {
		req, _ := http.NewRequest("GET", "/", nil)
		req.SetBasicAuth(user, pass)
		return map[string]string{"Authorization": req.Header.Get("Authorization"), "X-Revolver-Console": "1"}
	}
	if code, _ := httpDo(t, "GET", base+"/api/key?type=queue&key=jobs", nil, basic("viewer", "viewpw")); code != 200 {
		t.Errorf("the viewer reading a queue: %d", code)
	}
	// The viewer may read but not retry: NOPERM from the command table.
	code, body := httpDo(t, "POST", base+"/api/queue/retry", url.Values{"key": {"jobs"}, "id": {"d1"}}, basic("viewer", "viewpw"))
	if code != 403 || !strings.Contains(body["error"].(string), "NOPERM") {
		t.Errorf("the viewer retrying: %d %v", code, body)
	}
	if st := c.Do(ctx, "QUEUE.GET", "jobs", "d1").Val().([]any); st[3] != "dead" {
		t.Fatalf("d1 after a refused RETRY: %v", st)
	}
	if code, _ := httpDo(t, "POST", base+"/api/queue/retry", url.Values{"key": {"jobs"}, "id": {"d1"}}, basic("default", "s3cret")); code != 200 {
		t.Errorf("default retrying: %d", code)
	}
}

// TestConsoleConfig: the console's options in CONFIG like any other; the
// listener follows CONFIG SET http-port.
func TestConsoleConfig(t *testing.T) {
	srv, base := startConsole(t)
	c := goRedis(t, srv.Addr(), 2)
	ctx := context.Background()
	got := c.ConfigGet(ctx, "http-*").Val()
	if got["http-bind"] != "127.0.0.1" || got["http-port"] == "0" {
		t.Fatalf("CONFIG GET http-*: %v", got)
	}
	if v := c.ConfigGet(ctx, "metrics-top-keys").Val()["metrics-top-keys"]; v != "10" {
		t.Errorf("metrics-top-keys: %q", v)
	}
	for _, bad := range [][2]string{{"http-port", "70000"}, {"http-port", "x"}, {"metrics-top-keys", "-1"}, {"http-bind", ""}} {
		if err := c.ConfigSet(ctx, bad[0], bad[1]).Err(); err == nil {
			t.Errorf("CONFIG SET %s %q accepted", bad[0], bad[1])
		}
	}
	if err := c.ConfigSet(ctx, "http-port", "0").Err(); err != nil {
		t.Fatal(err)
	}
	if srv.HTTPAddr() != "" {
		t.Fatal("still listening with http-port 0")
	}
	if _, err := http.Get(base + "/api/overview"); err == nil {
		t.Fatal("the old port still answers")
	}
}

// TestConsoleBinaryKeys: a key and a job id that are not UTF-8 come out of
// the API as text (a byte the console escapes is U+F700 plus the byte) and,
// handed back as they came, name the same key and job.
func TestConsoleBinaryKeys(t *testing.T) {
	srv, base := startConsole(t)
	c := goRedis(t, srv.Addr(), 2)
	ctx := context.Background()
	key, id := "q\xff\x00", "j\xfe"
	for _, cmd := range [][]any{
		{"QUEUE.PUSH", key, "p", "ID", id, "MAXATTEMPTS", "1"},
		{"QUEUE.POPACK", key, "w", "LEASE", "60000"},
	} {
		if err := c.Do(ctx, cmd...).Err(); err != nil {
			t.Fatal(err)
		}
	}
	receipt := c.Do(ctx, "QUEUE.INFLIGHT", key).Val().([]any)[0].([]any)[4].(string)
	if err := c.Do(ctx, "QUEUE.NACK", key, receipt).Err(); err != nil {
		t.Fatal(err)
	}
	code, body := httpDo(t, "GET", base+"/api/keys?type=queue", nil, nil)
	keys, _ := body["keys"].([]any)
	if code != 200 || len(keys) != 1 {
		t.Fatalf("key list: %d %v", code, body)
	}
	shown := keys[0].(map[string]any)["key"].(string)
	if shown != "q\uf7ff\x00" { // NUL is UTF-8; 0xff is not
		t.Fatalf("the key shows as %q", shown)
	}
	code, body = httpDo(t, "GET", base+"/api/queue/dead?key="+url.QueryEscape(shown), nil, nil)
	jobs, _ := body["jobs"].([]any)
	if code != 200 || len(jobs) != 1 {
		t.Fatalf("dead jobs: %d %v", code, body)
	}
	shownID := jobs[0].(map[string]any)["id"].(string)
	code, body = httpDo(t, "POST", base+"/api/queue/retry", url.Values{"key": {shown}, "id": {shownID}},
		map[string]string{"X-Revolver-Console": "1"})
	if code != 200 {
		t.Fatalf("retry: %d %v", code, body)
	}
	if st := c.Do(ctx, "QUEUE.GET", key, id).Val().([]any); st[3] != "ready" {
		t.Fatalf("the job after RETRY: %v", st)
	}
}
