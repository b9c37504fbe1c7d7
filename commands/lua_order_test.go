package commands

import (
	"strings"
	"testing"

	lua "github.com/yuin/gopher-lua"
)

// TestConstructorHint pins what luaNextOrder relies on in the interpreter:
// a marked record constructor leaves its hash size where constructorHint
// reads it, and no other table looks like one.
func TestConstructorHint(t *testing.T) {
	L := lua.NewState()
	defer L.Close()
	for _, c := range []struct {
		src  string
		want int
	}{
		{"return {a=1, b=2, c=3}", 3},
		{"return {a=1}", 1},
		{"return {}", 0},
		{"return {1, 2}", 0},
		{"local t = {}; t.a = 1; return t", 0},
		{"local t = {a=1}; t[1] = 2; return t", 0},
	} {
		fn, err := L.Load(strings.NewReader(c.src), "test")
		if err != nil {
			t.Fatal(err)
		}
		markConstructors(fn.Proto)
		L.Push(fn)
		L.Call(0, 1)
		got := constructorHint(L.Get(-1).(*lua.LTable))
		L.Pop(1)
		if got != c.want {
			t.Errorf("%s: hint %d, want %d", c.src, got, c.want)
		}
	}
	if h := constructorHint(L.NewTable()); h != 0 {
		t.Errorf("NewTable: hint %d", h)
	}
}

// TestLuaNextOrder checks the model against orders Redis's Lua gives
// (recorded from Redis 7.0 with cjson.encode).
func TestLuaNextOrder(t *testing.T) {
	L := lua.NewState()
	defer L.Close()
	tb := L.NewTable()
	for _, k := range []string{"id", "name", "tags", "state", "ts"} { // as cjson.decode inserts them
		tb.RawSetString(k, lua.LTrue)
	}
	keys, _ := luaNextOrder(tb)
	var got []string
	for _, k := range keys {
		got = append(got, k.String())
	}
	if strings.Join(got, ",") != "state,ts,name,tags,id" {
		t.Fatalf("order %v", got)
	}
}
