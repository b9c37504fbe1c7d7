package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDifferentialLuaCorpus runs the Lua-semantics corpus in testdata/diff-lua
// against redis-server and Revolver, like TestDifferential. The corpus is the
// bar for Revolver's own Lua interpreter and much of it fails on gopher-lua,
// so it runs only on request:
//
//	REVOLVER_LUA_CORPUS=1 go test ./tests -run TestDifferentialLuaCorpus
//
// Once the interpreter passes, the files move to testdata/diff.
func TestDifferentialLuaCorpus(t *testing.T) {
	if os.Getenv("REVOLVER_LUA_CORPUS") != "1" {
		t.Skip("set REVOLVER_LUA_CORPUS=1 to run the Lua corpus in testdata/diff-lua")
	}
	redisAddr := realRedis(t)
	rev := startServer(t)
	files, _ := filepath.Glob("testdata/diff-lua/*.txt")
	if len(files) == 0 {
		t.Fatal("no scripts in testdata/diff-lua")
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".txt")
		t.Run(name, func(t *testing.T) {
			runDiffScript(t, redisAddr, rev.Addr(), readScript(t, f))
		})
	}
}
