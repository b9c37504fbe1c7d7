package tests

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/redis/go-redis/v9"
)

// The web console in a real browser (issue 35): headless Chromium driven
// over the DevTools protocol opens each page against a server holding
// timers, jobs, pools and rooms, reads what a person would read, and
// presses the buttons a person would press.

// chromiumPath finds Debian's chromium. Without it the browser tests skip
// loudly, or fail when REVOLVER_REQUIRE_BROWSER=1 (CI).
func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, p := range []string{os.Getenv("REVOLVER_CHROMIUM"), "/usr/bin/chromium", "/usr/bin/chromium-browser"} {
		if p == "" {
			continue
		}
		if _, err := exec.LookPath(p); err == nil {
			return p
		}
	}
	if os.Getenv("REVOLVER_REQUIRE_BROWSER") == "1" {
		t.Fatal("browser test needs chromium: apt-get install chromium (or set REVOLVER_CHROMIUM to its path)")
	}
	t.Skip("SKIPPING browser test: chromium not found (apt-get install chromium, or set REVOLVER_CHROMIUM; " +
		"REVOLVER_REQUIRE_BROWSER=1 makes this a failure)")
	return ""
}

// browserPage is one browser tab on the console.
type browserPage struct {
	t    *testing.T
	ctx  context.Context
	base string
	shot string // where screenshots go ("" for none)
}

// newBrowser starts headless chromium with a 1280x800 window; it stops
// with the test.
func newBrowser(t *testing.T, base string) *browserPage {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromiumPath(t)),
		chromedp.NoSandbox, // CI runs as root
		chromedp.WindowSize(1280, 800),
		chromedp.Flag("force-color-profile", "srgb"),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	bctx, cancelBrowser := chromedp.NewContext(actx)
	t.Cleanup(func() {
		cancelBrowser()
		cancelAlloc()
	})
	if err := chromedp.Do(bctx, chromedp.EmulateViewport(1280, 800)); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	shot := os.Getenv("REVOLVER_CONSOLE_SCREENSHOTS")
	if shot != "" && !filepath.IsAbs(shot) {
		shot = filepath.Join("..", shot) // relative to the repository, not to tests/
	}
	p := &browserPage{t: t, ctx: bctx, base: base, shot: shot}
	p.watch(bctx)
	return p
}

// watch records a tab's script errors and Content-Security-Policy
// refusals; the test fails on any (the pages must run under the server's
// strict policy without a single inline script or style).
func (p *browserPage) watch(tab context.Context) {
	t := p.t
	var mu sync.Mutex
	var problems []string
	note := func(s string) {
		mu.Lock()
		problems = append(problems, s)
		mu.Unlock()
	}
	exceptions := chromedp.Events(tab, runtime.ExceptionThrown)
	entries := chromedp.Events(tab, log.EntryAdded)
	go func() {
		for ev, err := range exceptions {
			if err != nil {
				return
			}
			d := ev.ExceptionDetails
			desc := d.Text
			if d.Exception != nil && d.Exception.Description != "" {
				desc = d.Exception.Description
			}
			note(fmt.Sprintf("script error at %s:%d: %s", d.URL, d.LineNumber, desc))
		}
	}()
	go func() {
		for ev, err := range entries {
			if err != nil {
				return
			}
			if strings.Contains(ev.Entry.Text, "Content Security Policy") {
				note("CSP: " + ev.Entry.Text)
			}
		}
	}()
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		for _, s := range problems {
			t.Error(s)
		}
	})
}

func (p *browserPage) do(steps ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, 15*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		p.t.Fatalf("browser: %v", err)
	}
}

// open loads the console at a route ("#/queue"): the first time as a
// navigation, then as a person following a link does (the hash changes).
func (p *browserPage) open(route string) {
	p.t.Helper()
	loaded, err := chromedp.Run(p.ctx, chromedp.Evaluate[string](`location.href`))
	if err == nil && strings.HasPrefix(loaded, p.base+"/") {
		p.eval(`location.hash = ` + jsString(route))
		return
	}
	p.do(chromedp.Navigate(p.base + "/" + route))
}

// eval runs a JavaScript expression and returns its value as text (null
// as "<null>").
func (p *browserPage) eval(expr string) string {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, 10*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[*string](`(() => { const v = (`+expr+`); return v === null || v === undefined ? null : String(v) })()`))
	if err != nil {
		p.t.Fatalf("evaluate %s: %v", expr, err)
	}
	if v == nil {
		return "<null>"
	}
	return *v
}

// waitJS polls expr until its text is want.
func (p *browserPage) waitJS(what, expr, want string) {
	p.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	last := ""
	for {
		last = p.eval(expr)
		if last == want {
			return
		}
		if time.Now().After(deadline) {
			banner := p.eval(`document.getElementById("banner").textContent`)
			p.t.Fatalf("%s: the page shows %q, want %q (error banner: %q)", what, last, want, banner)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitText polls the text of the first element matching a CSS selector.
func (p *browserPage) waitText(sel, want string) {
	p.t.Helper()
	p.waitJS(sel, `document.querySelector(`+jsString(sel)+`)?.textContent.trim()`, want)
}

// rowCell is the text of a column in the key list's row for key.
func rowCell(key, col string) string {
	return `[...document.querySelectorAll("#keys tbody tr")].find((r) => r.dataset.key === ` + jsString(key) +
		`)?.querySelector('[data-col=` + jsString(col) + `]')?.textContent.trim()`
}

// rows counts a table's body rows.
func rows(tableID string) string {
	return `document.querySelectorAll("#` + tableID + ` tbody tr").length`
}

func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// screenshot saves the page as <name>.png when REVOLVER_CONSOLE_SCREENSHOTS
// names a directory (the README's pictures come from here:
// REVOLVER_CONSOLE_SCREENSHOTS=docs/console go test ./tests -run TestConsoleBrowser).
func (p *browserPage) screenshot(name string) {
	p.t.Helper()
	if p.shot == "" {
		return
	}
	ctx, cancel := context.WithTimeout(p.ctx, 15*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		p.t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join(p.shot, name+".png"), png, 0o644); err != nil {
		p.t.Fatal(err)
	}
}

const hostileKey = `<img src=x onerror="window.__pwned=1">`

// fillConsoleData gives the server something to show: timers (one late),
// a queue with jobs ready, in flight and dead, a pool, a room, a queue with
// a hostile name and a string key.
func fillConsoleData(t *testing.T, c *redis.Client) {
	t.Helper()
	must := func(args ...any) any {
		t.Helper()
		v, err := c.Do(ctx, args...).Result()
		if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		return v
	}
	now := time.Now().UnixMilli()
	must("DELAY.ADD", "timers:billing", "inv-1", "IN", 60000)
	must("DELAY.ADD", "timers:billing", "inv-2", "IN", 3600000)
	must("DELAY.ADD", "timers:billing", "inv-late", "AT", now-5000)

	// Two jobs die: one attempt each, and their lease runs out.
	must("QUEUE.PUSH", "jobs:email", `{"to":"a@example.com"}`, "ID", "dead-1", "MAXATTEMPTS", 1)
	must("QUEUE.PUSH", "jobs:email", `{"to":"b@example.com"}`, "ID", "dead-2", "MAXATTEMPTS", 1)
	must("QUEUE.POPACK", "jobs:email", "crashy", "COUNT", 2, "LEASE", 20)
	waitFor(t, 10*time.Second, "two dead jobs", func() bool { return queueStats(t, c, "jobs:email")["dead"] == "2" })
	for i := 1; i <= 5; i++ {
		must("QUEUE.PUSH", "jobs:email", fmt.Sprintf(`{"n":%d}`, i), "ID", fmt.Sprintf("job-%d", i))
	}
	must("QUEUE.POPACK", "jobs:email", "worker-1", "COUNT", 2, "LEASE", 600000)
	must("QUEUE.PUSH", hostileKey, "x")

	args := []any{"NUMPOOL.ADD", "pool:sip"}
	for n := 1001; n <= 1010; n++ {
		args = append(args, n)
	}
	must(args...)
	must("NUMPOOL.REG", "pool:sip", 1001, 1002, 1003, 1004, 1005, 1006)
	must("NUMPOOL.EVENT", "pool:sip", "call", 1001)
	must("NUMPOOL.EVENT", "pool:sip", "call", 1002)

	must("ROOM.HEARTBEAT", "room:lobby", "u1", "u2", "u3", "u4", "u5")
	must("ROOM.PUB", "room:lobby", "hello")
	must("ROOM.PUB", "room:lobby", "welcome")
	must("ROOM.PUB", "room:lobby", "gift", "IMPORTANT")
	// a long poll waiting for the next message
	puller := redis.NewClient(&redis.Options{Addr: c.Options().Addr, Protocol: 2, DisableIdentity: true})
	t.Cleanup(func() { puller.Close() })
	go puller.Do(ctx, "ROOM.PULL", "room:lobby", 2, 1, "UID", "u1", "BLOCK", 60000)
	waitFor(t, 5*time.Second, "a blocked puller", func() bool {
		info, _ := c.Info(ctx, "clients").Result()
		return strings.Contains(info, "blocked_clients:1\r")
	})

	must("SET", "plain", "a string")
}

// queueStats is QUEUE.STATS as a map of texts.
func queueStats(t *testing.T, c *redis.Client, key string) map[string]string {
	t.Helper()
	v, err := c.Do(ctx, "QUEUE.STATS", key).Slice()
	if err != nil {
		t.Fatalf("QUEUE.STATS %s: %v", key, err)
	}
	m := map[string]string{}
	for i := 0; i+1 < len(v); i += 2 {
		m[fmt.Sprint(v[i])] = fmt.Sprint(v[i+1])
	}
	return m
}

func TestConsoleBrowser(t *testing.T) {
	chromiumPath(t)
	srv, base := startConsole(t, withPersistence(t.TempDir())) // the overview shows the log
	c := goRedis(t, srv.Addr(), 2)
	fillConsoleData(t, c)
	p := newBrowser(t, base)

	t.Run("overview", func(t *testing.T) {
		p.t = t
		p.open("#/")
		p.waitText("#conn", "live")
		p.waitText(`[data-col="queue-ready"]`, "4") // 3 in jobs:email, 1 in the hostile key's
		p.waitText(`[data-col="queue-inflight"]`, "2")
		p.waitText(`[data-col="queue-dead"]`, "2")
		p.waitText(`[data-col="delay-pending"]`, "3")
		p.waitText(`[data-col="numpool-busy-up"]`, "2")
		p.waitText(`[data-col="room-online"]`, "5")
		p.waitText(`[data-col="role"]`, "master")
		p.waitJS("clients", `Number(document.querySelector('[data-col="clients"]').textContent) >= 1`, "true")
		if p.shot != "" {
			// a few seconds of history for the sparklines, with some traffic
			stop := make(chan struct{})
			go func() {
				for {
					select {
					case <-stop:
						return
					default:
						c.Ping(ctx)
					}
				}
			}()
			p.waitJS("sparkline history", `document.querySelector(".spark-line")?.getAttribute("points").split(" ").length >= 8`, "true")
			close(stop)
		}
		p.screenshot("overview")
	})

	t.Run("delay", func(t *testing.T) {
		p.t = t
		p.open("#/delay")
		p.waitJS("pending", rowCell("timers:billing", "pending"), "3")
		p.waitJS("next timer", rowCell("timers:billing", "next_member"), "inv-late")
		p.waitJS("lateness", `/late$/.test(`+rowCell("timers:billing", "late")+`)`, "true")
		p.screenshot("delay")
		p.open("#/delay/0/" + "timers%3Abilling")
		p.waitJS("timers", rows("timers"), "3")
		p.waitText(`#timers tbody tr:first-child [data-col="member"]`, "inv-late")
		p.waitText(`#timers tbody tr:nth-child(2) [data-col="member"]`, "inv-1")
		p.waitJS("due", `/^in /.test(document.querySelector('#timers tbody tr:nth-child(2) [data-col="due"]').textContent)`, "true")
		p.screenshot("delay-key")
	})

	t.Run("queue list", func(t *testing.T) {
		p.t = t
		p.open("#/queue")
		for col, want := range map[string]string{"ready": "3", "inflight": "2", "dead": "2", "delayed": "0", "pushed": "7"} {
			p.waitJS(col, rowCell("jobs:email", col), want)
		}
		// a key named like markup is shown as its text, never run
		p.waitJS("hostile key", rowCell(hostileKey, "key"), hostileKey)
		p.waitJS("no markup", `document.querySelector("#keys img") === null && window.__pwned === undefined`, "true")
		p.waitJS("not a queue", rowCell("plain", "key"), "<null>")
		p.screenshot("queues")
	})

	t.Run("queue key", func(t *testing.T) {
		p.t = t
		// as a person does: follow the key's link
		p.open("#/queue")
		p.waitJS("row", rowCell("jobs:email", "ready"), "3")
		p.do(chromedp.Click(chromedp.CSS(`#keys tbody tr[data-key="jobs:email"] a`)))
		p.waitText("#keyname", "jobs:email")
		p.waitText(`#summary [data-col="ready"]`, "3")
		p.waitText(`#summary [data-col="dead"]`, "2")
		p.waitJS("in flight", rows("inflight"), "2")
		p.waitText(`#inflight tr[data-id="job-1"] [data-col="consumer"]`, "worker-1")
		p.waitJS("dead", rows("dead"), "2")
		p.waitJS("reason", `document.querySelector('#dead tr[data-id="dead-1"] [data-col="reason"]').textContent.length > 1`, "true")
		p.waitJS("ready", rows("ready"), "3")
		p.screenshot("queue-key")

		// RETRY moves the dead job back to ready
		p.do(chromedp.Click(chromedp.CSS(`#dead tr[data-id="dead-1"] button.retry`)))
		p.waitText(`#summary [data-col="dead"]`, "1")
		p.waitText(`#summary [data-col="ready"]`, "4")
		p.waitJS("retried job ready", `document.querySelector('#ready tr[data-id="dead-1"]') !== null`, "true")
		if st := queueStats(t, c, "jobs:email"); st["dead"] != "1" || st["ready"] != "4" {
			t.Fatalf("QUEUE.STATS after RETRY: %v", st)
		}

		// DELETE asks to be pressed twice
		p.do(chromedp.Click(chromedp.CSS(`#dead tr[data-id="dead-2"] button.delete`)))
		p.waitText(`#dead tr[data-id="dead-2"] button.delete`, "Confirm delete")
		if st := queueStats(t, c, "jobs:email"); st["dead"] != "1" {
			t.Fatalf("one press deleted: %v", st)
		}
		p.do(chromedp.Click(chromedp.CSS(`#dead tr[data-id="dead-2"] button.delete`)))
		p.waitText(`#summary [data-col="dead"]`, "0")
		p.waitText(`#dead + .list-status .empty`, "No dead jobs.")
		if st := queueStats(t, c, "jobs:email"); st["dead"] != "0" || st["ready"] != "4" {
			t.Fatalf("QUEUE.STATS after DELETE: %v", st)
		}
	})

	t.Run("hostile key page", func(t *testing.T) {
		p.t = t
		p.open("#/queue/0/" + urlEscape(hostileKey))
		p.waitText("#keyname", hostileKey)
		p.waitText(`#summary [data-col="ready"]`, "1")
		p.waitJS("no markup", `document.querySelector("#app img") === null && window.__pwned === undefined`, "true")
	})

	t.Run("numpool", func(t *testing.T) {
		p.t = t
		p.open("#/numpool")
		for col, want := range map[string]string{"numbers": "10", "idle_up": "4", "idle_down": "4", "busy_up": "2", "busy_down": "0"} {
			p.waitJS(col, rowCell("pool:sip", col), want)
		}
		p.screenshot("numpools")
		p.open("#/numpool/0/pool%3Asip")
		p.waitText(`#summary [data-col="busy_up"]`, "2")
		p.waitJS("numbers", rows("numbers"), "10")
		p.waitText(`#numbers tr[data-number="1001"] [data-col="state"]`, "busy+up")
		p.eval(`(() => { const s = document.getElementById("state-filter"); s.value = "busy+up"; s.dispatchEvent(new Event("change")); })()`)
		p.waitJS("busy numbers", rows("numbers"), "2")
		p.screenshot("numpool-key")
	})

	t.Run("room", func(t *testing.T) {
		p.t = t
		p.open("#/room")
		p.waitJS("online", rowCell("room:lobby", "online"), "5")
		p.waitJS("uv", rowCell("room:lobby", "uv"), "5")
		p.waitJS("important", rowCell("room:lobby", "important"), "1")
		p.waitJS("pullers", rowCell("room:lobby", "pullers"), "1")
		// the message rate comes from the growth of the sequence numbers
		// between two refreshes
		for i := range 20 {
			if err := c.Do(ctx, "ROOM.PUB", "room:lobby", fmt.Sprint("m", i)).Err(); err != nil {
				t.Fatal(err)
			}
		}
		p.waitJS("rate", `(() => { const v = `+rowCell("room:lobby", "rate")+`; return /^[0-9.]+$/.test(v) && Number(v) > 0 })()`, "true")
		p.screenshot("rooms")
		p.open("#/room/0/room%3Alobby")
		p.waitText(`#summary [data-col="online"]`, "5")
		p.waitJS("members", rows("members"), "5")
		p.screenshot("room-key")
	})

	t.Run("pagination and filter", func(t *testing.T) {
		p.t = t
		db1 := redis.NewClient(&redis.Options{Addr: srv.Addr(), DB: 1, Protocol: 2, DisableIdentity: true})
		defer db1.Close()
		pipe := db1.Pipeline()
		for i := range 600 {
			pipe.Do(ctx, "QUEUE.PUSH", fmt.Sprintf("bulk:%03d", i), "x")
		}
		if _, err := pipe.Exec(ctx); err != nil {
			t.Fatal(err)
		}
		// what one listing finds first, then "Load more" until the scan ends
		loadAll := func(want string) {
			t.Helper()
			for i := 0; ; i++ {
				p.waitJS("the scan paused", `(() => { const s = document.getElementById("list-status").textContent; return s !== "" && !s.includes("Scanning") })()`, "true")
				if p.eval(`document.getElementById("more") !== null`) != "true" {
					break
				}
				if i > 50 {
					t.Fatal("the listing never ends")
				}
				p.do(chromedp.Click(chromedp.CSS("#more")))
			}
			p.waitJS("keys", rows("keys"), want)
			p.waitJS("done", `document.getElementById("list-status").textContent.includes("the whole keyspace scanned")`, "true")
		}
		p.open("#/queue?db=1")
		p.waitJS("more", `document.getElementById("more") !== null`, "true")
		loadAll("600")
		p.waitJS("db", `document.getElementById("db").value`, "1")

		p.do(chromedp.SendKeys(chromedp.CSS("#match"), "bulk:1*"), chromedp.Click(chromedp.CSS(`form.controls button[type="submit"]`)))
		p.waitJS("filtered", `location.hash`, "#/queue?db=1&match=bulk%3A1*")
		p.waitJS("filtered page", `document.querySelector("h1 .sub").textContent.includes("matching “bulk:1*”")`, "true")
		loadAll("100")
		p.waitJS("only matches", `[...document.querySelectorAll("#keys tbody tr")].every((r) => r.dataset.key.startsWith("bulk:1"))`, "true")
	})

	t.Run("empty and missing", func(t *testing.T) {
		p.t = t
		p.open("#/queue?db=5")
		p.waitText("#empty", "No QUEUE keys in db5.")
		p.open("#/room?db=5&match=nothing*")
		p.waitText("#empty", "No ROOM keys in db5 matching “nothing*”.")
		p.open("#/queue/0/nosuch")
		p.waitText("#missing", "No QUEUE key “nosuch” in db0.")
		p.open("#/queue/0/plain")
		p.waitJS("wrong type", `/not a queue/.test(document.getElementById("missing").textContent)`, "true")
	})
}

// TestConsoleBrowserAuth: with requirepass, a browser without the
// password gets no page; a person who types it into the browser's login
// prompt gets the console; when the password changes under an open page
// and the person cancels the new prompt, the page says credentials are
// needed.
func TestConsoleBrowserAuth(t *testing.T) {
	chromiumPath(t)
	srv, base := startConsole(t, withConfig("requirepass", "s3cret"))
	p := newBrowser(t, base)

	// Chromium turns a 401 it cannot ask about into a load error, or shows
	// the refusal's body; either way no console.
	if err := chromedp.Do(p.ctx, chromedp.Navigate(base+"/#/")); err != nil {
		if !strings.Contains(err.Error(), "AUTH") {
			t.Fatalf("without the password: %v", err)
		}
	} else {
		p.waitJS("refused", `document.body.textContent.includes("authentication required") && document.getElementById("app") === null`, "true")
	}

	// A tab whose login prompt is answered with the password until it
	// changes, and cancelled after.
	tab, cancel := chromedp.NewContext(p.ctx)
	defer cancel()
	var changed atomic.Bool
	paused := chromedp.Events(tab, fetch.RequestPaused)
	challenged := chromedp.Events(tab, fetch.AuthRequired)
	go func() {
		for ev, err := range paused {
			if err != nil {
				return
			}
			go chromedp.Call(tab, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: ev.RequestID})
		}
	}()
	go func() {
		for ev, err := range challenged {
			if err != nil {
				return
			}
			answer := &fetch.AuthChallengeResponse{Response: fetch.AuthChallengeResponseResponseProvideCredentials, Username: "default", Password: "s3cret"}
			if changed.Load() {
				answer = &fetch.AuthChallengeResponse{Response: fetch.AuthChallengeResponseResponseCancelAuth}
			}
			go chromedp.Call(tab, fetch.ContinueWithAuth, fetch.ContinueWithAuthParams{RequestID: ev.RequestID, AuthChallengeResponse: answer})
		}
	}()
	yes := true
	if _, err := chromedp.Call(tab, fetch.Enable, fetch.EnableParams{HandleAuthRequests: &yes}); err != nil {
		t.Fatal(err)
	}
	p.ctx = tab
	p.watch(tab)
	p.do(chromedp.Navigate(base + "/#/"))
	p.waitText("#conn", "live")
	p.waitText(`[data-col="queue-keys"]`, "0")
	// an empty server: every list says so
	for _, f := range []string{"delay", "queue", "numpool", "room"} {
		p.open("#/" + f)
		p.waitText("#empty", "No "+strings.ToUpper(f)+" keys in db0.")
	}

	c := redis.NewClient(&redis.Options{Addr: srv.Addr(), Password: "s3cret", Protocol: 2, DisableIdentity: true})
	defer c.Close()
	changed.Store(true)
	if err := c.ConfigSet(ctx, "requirepass", "changed").Err(); err != nil {
		t.Fatal(err)
	}
	p.open("#/queue")
	p.waitJS("banner", `/^Credentials needed/.test(document.getElementById("banner").textContent)`, "true")
}

func urlEscape(s string) string {
	// encodeURIComponent, as the pages build their links
	var b strings.Builder
	for _, c := range []byte(s) {
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("-_.!~*'()", c) >= 0 {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}
