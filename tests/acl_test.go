package tests

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
)

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// TestACLDefaultUserPasswords: requirepass and ACL SETUSER default shape
// the same user; what ACL LIST shows is what AUTH accepts on new
// connections, and failed AUTHs land in ACL LOG, on both servers.
func TestACLDefaultUserPasswords(t *testing.T) {
	onBothServers(t, func(t *testing.T, addr string) {
		admin := dialRaw(t, addr)
		t.Cleanup(func() {
			c := dialRaw(t, addr)
			c.do("AUTH", "default", "second")
			c.do("CONFIG", "SET", "requirepass", "")
			c.do("ACL", "SETUSER", "default", "on", "nopass")
			c.do("ACL", "LOG", "RESET")
		})
		expect := func(c *rawConn, want string, args ...string) {
			t.Helper()
			if got := c.do(args...).String(); got != want {
				t.Errorf("%v: %s, want %s", args, got, want)
			}
		}
		expect(admin, "+OK", "ACL", "LOG", "RESET")
		expect(admin, "+OK", "CONFIG", "SET", "requirepass", "secret")
		expect(admin, `1) "user default on #`+sha256Hex("secret")+` ~* &* +@all"`, "ACL", "LIST")

		c := dialRaw(t, addr)
		expect(c, "(error) NOAUTH Authentication required.", "GET", "k")
		expect(c, "(error) WRONGPASS invalid username-password pair or user is disabled.", "AUTH", "wrong")
		expect(c, "(error) WRONGPASS invalid username-password pair or user is disabled.", "AUTH", "default", "wrong")
		expect(c, "+OK", "AUTH", "default", "secret")
		log := admin.do("ACL", "LOG")
		if len(log.Elems) != 1 || len(log.Elems[0].Elems) != 14 {
			t.Fatalf("ACL LOG: %s", log)
		}
		e := log.Elems[0].Elems
		for i, want := range []string{"count", "(integer) 2", "reason", `"auth"`, "context", `"toplevel"`,
			"object", `"AUTH"`, "username", `"default"`} {
			if got := e[i].String(); got != want && got != `"`+want+`"` {
				t.Errorf("ACL LOG field %d: %s, want %s", i, got, want)
			}
		}

		// Inside a transaction the context is "multi".
		c.do("MULTI")
		c.do("AUTH", "wrong")
		c.do("EXEC")
		if v := admin.do("ACL", "LOG", "1"); len(v.Elems) != 1 || v.Elems[0].Elems[5].Str != "multi" {
			t.Errorf("ACL LOG after AUTH in MULTI: %s", v)
		}

		// A second password, then the first one removed.
		expect(admin, "+OK", "ACL", "SETUSER", "default", ">second", "<secret")
		c = dialRaw(t, addr)
		expect(c, "(error) WRONGPASS invalid username-password pair or user is disabled.", "AUTH", "secret")
		expect(c, "+OK", "AUTH", "second")

		// A disabled user accepts no password.
		expect(admin, "+OK", "ACL", "SETUSER", "default", "off")
		c = dialRaw(t, addr)
		expect(c, "(error) WRONGPASS invalid username-password pair or user is disabled.", "AUTH", "default", "second")
		expect(admin, "+OK", "ACL", "SETUSER", "default", "on")
		expect(c, "+OK", "AUTH", "default", "second")

		// nopass lets every new connection in.
		expect(admin, "+OK", "ACL", "SETUSER", "default", "nopass")
		c = dialRaw(t, addr)
		expect(c, "(nil)", "GET", "k")
		expect(admin, `1) "user default on nopass ~* &* +@all"`, "ACL", "LIST")

		// requirepass resets the passwords.
		expect(admin, "+OK", "CONFIG", "SET", "requirepass", "third")
		c = dialRaw(t, addr)
		expect(c, "(error) NOAUTH Authentication required.", "GET", "k")
		expect(c, "+OK", "AUTH", "third")
		expect(admin, "+OK", "CONFIG", "SET", "requirepass", "")
		expect(admin, `1) "user default on nopass ~* &* +@all"`, "ACL", "LIST")
	})
}

// TestCommandsOfFeaturesElsewhere: the replies of commands whose feature
// is not here (the Lua debugger, modules) or needs replicas.
func TestCommandsOfFeaturesElsewhere(t *testing.T) {
	c := dialRaw(t, startServer(t).Addr())
	if v := c.do("SCRIPT", "DEBUG", "yes"); v.String() !=
		"(error) ERR SCRIPT DEBUG YES is not supported: this server has no Lua debugger" {
		t.Errorf("SCRIPT DEBUG yes: %s", v)
	}
	// (REPLICAOF, SYNC and PSYNC work now: tests/replica_test.go,
	// tests/repl_master*_test.go.)
	for cmd, want := range map[string]string{
		"FAILOVER":        "(error) ERR FAILOVER requires connected replicas.",
		"WAIT 0 0":        "(integer) 0",
		"MODULE LIST":     "(empty)",
		"SCRIPT DEBUG NO": "+OK",
	} {
		if v := c.do(strings.Fields(cmd)...); v.String() != want {
			t.Errorf("%s: %s, want %s", cmd, v, want)
		}
	}
	if v := c.do("REPLCONF", "ACK", "1"); v.String() != "+OK" {
		t.Errorf("REPLCONF ACK: %s", v)
	}
}
