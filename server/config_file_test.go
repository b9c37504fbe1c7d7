package server

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestImportRDBAndAppendOnlyArgs: --import-rdb alone says yes; appendonly
// no is accepted at start-up with persistence on (and remembered), refused
// at runtime, and its line survives CONFIG REWRITE; appendonly yes with
// persistence off is refused.
func TestImportRDBAndAppendOnlyArgs(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want bool
	}{
		{[]string{"--import-rdb"}, true},
		{[]string{"--import-rdb", "yes"}, true},
		{[]string{"--import-rdb", "no"}, false},
		{nil, false},
	} {
		cfg, err := ParseArgs(tc.args)
		if err != nil || cfg.ImportRDB != tc.want || cfg.Param("import-rdb") != yesNo(tc.want) {
			t.Errorf("ParseArgs(%q): %v %v", tc.args, cfg.ImportRDB, err)
		}
	}
	if _, err := ParseArgs([]string{"--import-rdb", "maybe"}); err == nil {
		t.Error("import-rdb maybe accepted")
	}
	if _, err := ParseArgs([]string{"--appendonly", "yes", "--persistence", "off"}); err == nil {
		t.Error("appendonly yes with persistence off accepted")
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "redis.conf")
	if err := os.WriteFile(file, []byte("appendonly no\nport 0\ndir "+dir+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := ParseArgs([]string{file})
	if err != nil || cfg.AppendOnly != "no" || !cfg.Persistence || cfg.Param("appendonly") != "yes" {
		t.Fatalf("appendonly no: %+v %v", cfg.AppendOnly, err)
	}
	s, err := Start(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.ConfigSet([][2]string{{"appendonly", "no"}}); err == nil ||
		!strings.Contains(err.Error(), "it follows persistence") {
		t.Errorf("CONFIG SET appendonly no: %v", err)
	}
	if err := s.ConfigSet([][2]string{{"appendonly", "yes"}}); err != nil {
		t.Errorf("CONFIG SET appendonly yes: %v", err)
	}
	if err := s.ConfigRewrite(); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(file); !strings.Contains(string(data), "appendonly no\n") {
		t.Errorf("CONFIG REWRITE changed the appendonly line:\n%s", data)
	}
}
