package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/revolver-db/revolver/resp"
)

// parseCommands splits encoded commands back into their arguments.
func parseCommands(t *testing.T, b []byte) [][]string {
	t.Helper()
	c := &Conn{br: bufio.NewReader(bytes.NewReader(b))}
	var out [][]string
	for {
		v, err := c.readValue()
		if err != nil {
			return out
		}
		var args []string
		for _, e := range v.Elems {
			args = append(args, e.Str)
		}
		out = append(out, args)
	}
}

// TestNumpoolNativeLoad: ADD then REG of each batch, every number once, in
// order.
func TestNumpoolNativeLoad(t *testing.T) {
	const n, per = 25, 10
	cmds, gen := npNativeLoad(n, per)
	if cmds != 6 {
		t.Fatalf("%d commands, want 6", cmds)
	}
	var added, regd []string
	for i := range cmds {
		args := parseCommands(t, gen(nil, i))[0]
		want := [2]string{"NUMPOOL.ADD", "NUMPOOL.REG"}[i%2]
		if args[0] != want || args[1] != npKey {
			t.Fatalf("command %d: %v, want %s %s", i, args[:2], want, npKey)
		}
		if i%2 == 0 {
			added = append(added, args[2:]...)
		} else {
			regd = append(regd, args[2:]...)
		}
	}
	if len(added) != n || strings.Join(added, " ") != strings.Join(regd, " ") {
		t.Fatalf("added %v, registered %v", added, regd)
	}
	for i, a := range added {
		if a != numpoolNumber(i) {
			t.Fatalf("number %d is %s, want %s", i, a, numpoolNumber(i))
		}
	}
}

// TestNumpoolRecipeMemory: the script's state for idle+up numbers, a LIST
// entry and a HASH field each.
func TestNumpoolRecipeMemory(t *testing.T) {
	const n = 2*npRecipePer + 3
	ms := npMemSet(n)
	if ms.elems != n || ms.redisCmds != 6 {
		t.Fatalf("elems %d, redis commands %d", ms.elems, ms.redisCmds)
	}
	var list []string
	fields := map[string]string{}
	for i := range ms.redisCmds {
		args := parseCommands(t, ms.redisGen(nil, i))[0]
		switch {
		case i%2 == 0 && args[0] == "RPUSH" && args[1] == numpoolKey+":idle:up":
			list = append(list, args[2:]...)
		case i%2 == 1 && args[0] == "HSET" && args[1] == numpoolKey+":numstate":
			for j := 2; j+1 < len(args); j += 2 {
				fields[args[j]] = args[j+1]
			}
		default:
			t.Fatalf("command %d: %v", i, args[:2])
		}
	}
	if len(list) != n || len(fields) != n {
		t.Fatalf("%d in the LIST, %d in the HASH", len(list), len(fields))
	}
	for i, num := range list {
		if num != numpoolNumber(i) || fields[num] != npIdleUp {
			t.Fatalf("number %d: %s in the LIST, %q in the HASH", i, num, fields[num])
		}
	}
}

func TestNumpoolDialects(t *testing.T) {
	bulk := func(s string) resp.Value { return resp.Value{Kind: resp.KindBulk, Str: s} }
	nat := npNativeDialect("fifo")
	if got := parseCommands(t, nat.call)[0]; strings.Join(got, " ") != "NUMPOOL.EVENT numpool call POLICY fifo" {
		t.Fatalf("native call %v", got)
	}
	if got := parseCommands(t, npNativeDialect("").call)[0]; len(got) != 3 {
		t.Fatalf("default-policy call %v", got)
	}
	pair := resp.Value{Kind: resp.KindArray, Elems: []resp.Value{bulk("13800000007"), {Kind: resp.KindInt, Int: 9}}}
	if n, err := nat.taken(pair); n != "13800000007" || err != nil {
		t.Fatalf("native call reply: %q %v", n, err)
	}
	if n, err := nat.taken(resp.Value{Kind: resp.KindNull, Nil2: '*'}); n != "" || err != nil {
		t.Fatalf("native nil: %q %v", n, err)
	}
	if _, err := nat.taken(bulk("13800000007")); err == nil {
		t.Fatal("native call accepted a bare number")
	}
	if !nat.hungUp(resp.Value{Kind: resp.KindSimple, Str: "idle+up"}) ||
		nat.hungUp(resp.Value{Kind: resp.KindSimple, Str: "idle+down"}) {
		t.Fatal("native hangup check")
	}
	sc := npScriptDialect
	if n, err := sc.taken(bulk("13800000001")); n != "13800000001" || err != nil {
		t.Fatalf("script call reply: %q %v", n, err)
	}
	if n, err := sc.taken(bulk("0")); n != "" || err != nil {
		t.Fatalf("script none free: %q %v", n, err)
	}
	if !sc.hungUp(bulk("1")) || sc.hungUp(bulk("-1")) {
		t.Fatal("script hangup check")
	}
	c := &Conn{}
	nat.hangup(c, "13800000001")
	sc.hangup(c, "13800000001")
	got := parseCommands(t, c.out)
	if strings.Join(got[0], " ") != "NUMPOOL.EVENT numpool hangup 13800000001" ||
		strings.Join(got[1], " ") != "EVALSHA "+numpoolSHA+" 1 {numpool} hangup 13800000001" {
		t.Fatalf("hangups %v", got)
	}
}

// TestNumpoolInfoCheck: NUMPOOL.INFO as RESP2 sends the map, with the
// nested tags map skipped.
func TestNumpoolInfoCheck(t *testing.T) {
	info := func(idleUp, busyUp int64) resp.Value {
		v := resp.Value{Kind: resp.KindArray}
		for _, kv := range []struct {
			k string
			n int64
		}{{"numbers", 3}, {"idle+up", idleUp}, {"idle+down", 0}, {"busy+up", busyUp}, {"busy+down", 0},
			{"calls", 12}, {"lease-hangups", 0}} {
			v.Elems = append(v.Elems, resp.Value{Kind: resp.KindBulk, Str: kv.k}, resp.Value{Kind: resp.KindInt, Int: kv.n})
		}
		v.Elems = append(v.Elems, resp.Value{Kind: resp.KindBulk, Str: "tags"}, resp.Value{Kind: resp.KindArray})
		return v
	}
	m, err := npIntFields(info(3, 0))
	if err != nil || m["calls"] != 12 {
		t.Fatalf("%v %v", m, err)
	}
	if err := npCheckInfo(m, 3); err != nil {
		t.Fatal(err)
	}
	m, _ = npIntFields(info(2, 1))
	if err := npCheckInfo(m, 3); err == nil {
		t.Fatal("a busy number passed the check")
	}
	if _, err := npIntFields(resp.Value{Kind: resp.KindArray, Elems: []resp.Value{{Kind: resp.KindBulk}}}); err == nil {
		t.Fatal("an odd-length map parsed")
	}
}

// TestSmokeNumpoolSuite runs the numpool suite briefly against a Revolver
// built from this checkout and redis-server when one is in PATH: every row
// measured (the NUMPOOL rows skipped only while the checkout has no
// NUMPOOL), no error replies, no call without a free number.
func TestSmokeNumpoolSuite(t *testing.T) {
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	_, statErr := os.Stat(filepath.Join(root, "commands", "numpool.go"))
	hasNumpool := statErr == nil
	bin := testRevolverBinary(t)
	out := t.TempDir()
	args := []string{"--suite", "numpool", "--duration", "200ms", "--rounds", "1", "--scale", "0.001", "--clients", "8",
		"--revolver-bin", bin, "--out", out, "--json"}
	sides := []string{"Revolver"}
	if _, err := exec.LookPath("redis-server"); err == nil {
		args = append(args, "--vs", "redis")
		sides = append(sides, "Redis")
	} else {
		t.Log("no redis-server in PATH: Revolver only")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	if err := run(ctx, args, &stdout, &stderr); err != nil {
		t.Fatalf("run: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	md, err := readResult(out, "numpool", ".md")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []int{1, 16} {
		for _, v := range []npVariant{npFifo, npLRU, npLua} {
			if w := "| " + npRowName(p, v); !strings.Contains(string(md), w) {
				t.Errorf("markdown lacks %q:\n%s", w, md)
			}
		}
	}
	for _, w := range []string{"| memory: 1k idle+up numbers", "Latency of call", "Latency of hangup", "srv CPU µs/pair"} {
		if !strings.Contains(string(md), w) {
			t.Errorf("markdown lacks %q:\n%s", w, md)
		}
	}
	b, err := readResult(out, "numpool", ".json")
	if err != nil {
		t.Fatal(err)
	}
	var rep struct{ Rows []*Row }
	if err := json.Unmarshal(b, &rep); err != nil || len(rep.Rows) != 7 {
		t.Fatalf("json: %v, %d rows", err, len(rep.Rows))
	}
	for _, row := range rep.Rows {
		for _, name := range sides {
			side := row.Sides[name]
			nativeRow := name == "Revolver" && !strings.Contains(row.Name, npLua.label)
			if !hasNumpool && nativeRow && side != nil && side.Skip &&
				strings.Contains(strings.ToUpper(side.Note), "NUMPOOL") {
				continue
			}
			if side == nil || side.Skip || len(side.Rounds) != 1 {
				t.Errorf("%s was not measured on %s: %+v", row.Name, name, side)
				continue
			}
			r := side.Rounds[0]
			if strings.HasPrefix(row.Name, npMemPrefix) {
				if r["used"] <= 0 {
					t.Errorf("%s on %s: %v B per number", row.Name, name, r["used"])
				}
				continue
			}
			if r["pairs"] <= 0 || r["errors"] != 0 || r["empty"] != 0 || strings.Contains(side.Note, "counted") {
				t.Errorf("%s on %s: %v pairs/s, %v error replies, %v%% empty (%s)", row.Name, name, r["pairs"],
					r["errors"], r["empty"], side.Note)
			}
			if _, ok := r["srvcpu"]; !ok {
				t.Errorf("%s on %s: no server CPU", row.Name, name)
			}
		}
	}
	if len(sides) == 2 && hasNumpool && !strings.Contains(string(md), "Targets, "+npRowName(1, npFifo)) {
		t.Errorf("no targets note:\n%s", md)
	}
}
