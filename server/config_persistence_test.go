package server

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/revolver-db/revolver/persistence"
)

// TestPersistenceMaxMemoryConfig: persistence-max-memory is a memory value
// (Redis's units) of at least persistence.MinMaxMemory, 32 MB by default,
// read from flags and config files; CONFIG SET changes the store's cap at
// once, and INFO persistence reports the cap and what the store holds.
func TestPersistenceMaxMemoryConfig(t *testing.T) {
	if cfg := DefaultConfig(); cfg.PersistenceMaxMemory != persistence.DefaultMaxMemory || persistence.DefaultMaxMemory != 32<<20 || lookupParam("persistence-max-memory").get(&cfg) != "33554432" {
		t.Fatalf("default %d", cfg.PersistenceMaxMemory)
	}
	file := filepath.Join(t.TempDir(), "revolver.conf")
	if err := os.WriteFile(file, []byte("persistence-max-memory 16mb\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want int64
	}{
		{[]string{"--persistence-max-memory", "64mb"}, 64 << 20},
		{[]string{"--persistence-max-memory", "4194304"}, 4 << 20},
		{[]string{"--persistence-max-memory", "1GB"}, 1 << 30},
		{[]string{file}, 16 << 20},
		{[]string{file, "--persistence-max-memory", "8mb"}, 8 << 20},
	} {
		cfg, err := ParseArgs(tc.args)
		if err != nil || cfg.PersistenceMaxMemory != tc.want {
			t.Errorf("ParseArgs(%q): %d, %v; want %d", tc.args, cfg.PersistenceMaxMemory, err, tc.want)
		}
	}
	for _, v := range []string{"1mb", "4194303", "-1", "abc", "32 mb", ""} {
		if _, err := ParseArgs([]string{"--persistence-max-memory", v}); err == nil {
			t.Errorf("persistence-max-memory %q accepted", v)
		}
	}

	cfg := DefaultConfig()
	cfg.Port, cfg.Dir = 0, t.TempDir()
	cfg.PersistenceMaxMemory = 8 << 20
	s, err := Start(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if st := s.store.Stats(); st.MaxMemory != 8<<20 {
		t.Fatalf("store opened with a cap of %d", st.MaxMemory)
	}
	if err := s.ConfigSet([][2]string{{"persistence-max-memory", "24mb"}}); err != nil {
		t.Fatal(err)
	}
	if err := s.ConfigSet([][2]string{{"persistence-max-memory", "2mb"}}); err == nil ||
		!strings.Contains(err.Error(), "argument must be between") {
		t.Fatalf("CONFIG SET persistence-max-memory 2mb: %v", err)
	}
	if got := s.ConfigGet("persistence-max-memory"); len(got) != 1 || got[0][1] != "25165824" {
		t.Fatalf("CONFIG GET: %q", got)
	}
	st := s.store.Stats()
	if st.MaxMemory != 24<<20 || st.HeldBytes > st.MaxMemory || st.MemoryBytes > st.HeldBytes {
		t.Fatalf("after CONFIG SET: %+v", st)
	}
	info := s.infoText(t, "persistence")
	for _, field := range []string{"store_memory:", "store_memtables:", "store_max_memory:25165824", "store_max_memory_human:24.00M"} {
		if !strings.Contains(info, "\r\n"+field) {
			t.Errorf("INFO persistence lacks %q:\n%s", field, info)
		}
	}
	held := infoField(info, "store_memory")
	if n, err := strconv.ParseInt(held, 10, 64); err != nil || n <= 0 || n > 24<<20 {
		t.Errorf("store_memory %q", held)
	}
}

// infoText is INFO section as a client reads it.
func (s *Server) infoText(t *testing.T, section string) string {
	t.Helper()
	c := dialServer(t, s)
	c.send(multibulk("INFO", section))
	return c.line()
}

func infoField(info, name string) string {
	for _, l := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(l, name+":"); ok {
			return v
		}
	}
	return ""
}
