package server

import "testing"

// TestTableParamsAtStartUp: table parameters read from flags (or a config
// file) are validated and kept as CONFIG GET shows them; start-up values
// Revolver cannot honour are refused.
func TestTableParamsAtStartUp(t *testing.T) {
	cfg, err := ParseArgs([]string{"--save", "900", "1", "--hz", "1000", "--maxmemory-clients", "5%",
		"--unixsocketperm", "700", "--supervised", "SYSTEMD", "--slave-priority", "7"})
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"save": "900 1", "hz": "500", "maxmemory-clients": "5%",
		"unixsocketperm": "700", "supervised": "systemd", "replica-priority": "7"} {
		if got := lookupParam(name).get(&cfg); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	for _, args := range [][]string{{"--daemonize", "maybe"}, {"--cluster-enabled", "yes"}, {"--hz", "x"},
		{"--maxmemory-clients", "101%"}, {"--shutdown-on-sigterm", "save", "nosave"}} {
		if _, err := ParseArgs(args); err == nil {
			t.Errorf("ParseArgs(%q) accepted", args)
		}
	}
}
