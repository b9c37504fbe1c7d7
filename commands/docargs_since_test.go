package commands

import "testing"

// TestArgsSince: "@version" after an argument or group is its "since".
func TestArgsSince(t *testing.T) {
	args, err := parseArgs("key [condition=NX|XX] @6.2.0 [change=CH] @6.2.0 [count=COUNT count:integer [ANY] @6.2.0] member")
	if err != nil {
		t.Fatal(err)
	}
	if len(args) != 5 {
		t.Fatalf("%d arguments", len(args))
	}
	for i, want := range []string{"", "6.2.0", "6.2.0", "", ""} {
		if args[i].Since != want {
			t.Errorf("%s: since %q, want %q", args[i].Name, args[i].Since, want)
		}
	}
	if any := args[3].Args[1]; any.Name != "any" || any.Since != "6.2.0" || args[3].Name != "count" {
		t.Errorf("count block: %q %q since %q", args[3].Name, any.Name, any.Since)
	}
	if _, err := parseArgs("TOKEN @1.0"); err != nil {
		t.Errorf("a pure token with a since: %v", err)
	}
}
