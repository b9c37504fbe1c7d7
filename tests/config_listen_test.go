package tests

import (
	"net"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestConfigSetPortBind: CONFIG SET port and bind make the server listen
// again at runtime, as Redis 7.0 does, connections already made staying;
// when it cannot listen the previous settings come back, with Redis's
// error naming the first of port (if it changes) and bind. bind "" leaves
// no listener. Run on a private redis-server and on Revolver.
func TestConfigSetPortBind(t *testing.T) {
	servers := map[string]string{"redis": startRealRedis(t), "revolver": startServer(t).Addr()}
	for _, name := range []string{"redis", "revolver"} {
		t.Run(name, func(t *testing.T) {
			c := dialRaw(t, servers[name])
			reachable := func(port int) bool {
				nc, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), time.Second)
				if err != nil {
					return false
				}
				defer nc.Close()
				nc.SetDeadline(time.Now().Add(2 * time.Second))
				nc.Write([]byte("PING\r\n"))
				buf := make([]byte, 7)
				n, _ := nc.Read(buf)
				return string(buf[:n]) == "+PONG\r\n"
			}
			expect := func(args []string, want string) {
				t.Helper()
				if got := c.do(args...).String(); got != want {
					t.Errorf("%s: %s, want %s", strings.Join(args, " "), got, want)
				}
			}
			_, oldPort, _ := net.SplitHostPort(servers[name])
			port1, _ := strconv.Atoi(oldPort)
			port2, err := freePort()
			if err != nil {
				t.Fatal(err)
			}

			expect([]string{"CONFIG", "SET", "port", strconv.Itoa(port2)}, "+OK")
			if reachable(port1) || !reachable(port2) {
				t.Fatalf("after CONFIG SET port: old port reachable %v, new %v", reachable(port1), reachable(port2))
			}
			expect([]string{"PING"}, "+PONG") // the connection that moved it stays
			expect([]string{"CONFIG", "GET", "port"}, "1) \"port\"\n2) \""+strconv.Itoa(port2)+"\"")

			// A port taken: the old one is kept.
			taken, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer taken.Close()
			takenPort := strconv.Itoa(taken.Addr().(*net.TCPAddr).Port)
			portErr := "(error) ERR CONFIG SET failed (possibly related to argument 'port') - Unable to listen on this port. Check server logs."
			bindErr := "(error) ERR CONFIG SET failed (possibly related to argument 'bind') - Failed to bind to specified addresses."
			expect([]string{"CONFIG", "SET", "port", takenPort}, portErr)
			expect([]string{"CONFIG", "SET", "port", takenPort, "bind", "1.2.3.4"}, portErr)
			expect([]string{"CONFIG", "SET", "bind", "1.2.3.4", "port", takenPort}, bindErr)
			expect([]string{"CONFIG", "SET", "bind", "1.2.3.4"}, bindErr)
			// An unchanged port is not applied: bind's error.
			expect([]string{"CONFIG", "SET", "port", strconv.Itoa(port2), "bind", "1.2.3.4"}, bindErr)
			if !reachable(port2) {
				t.Fatal("not listening on the previous port after a failed CONFIG SET")
			}
			expect([]string{"CONFIG", "GET", "port"}, "1) \"port\"\n2) \""+strconv.Itoa(port2)+"\"")
			expect([]string{"CONFIG", "GET", "bind"}, "1) \"bind\"\n2) \"127.0.0.1\"")

			// An optional address that cannot be had is skipped.
			expect([]string{"CONFIG", "SET", "bind", "127.0.0.1 -1.2.3.4"}, "+OK")
			expect([]string{"CONFIG", "GET", "bind"}, "1) \"bind\"\n2) \"127.0.0.1 -1.2.3.4\"")
			if !reachable(port2) {
				t.Fatal("not listening after bind with an optional address")
			}

			// No address: nothing listens, the connections stay.
			expect([]string{"CONFIG", "SET", "bind", ""}, "+OK")
			if reachable(port2) {
				t.Fatal("listening after CONFIG SET bind \"\"")
			}
			expect([]string{"CONFIG", "SET", "bind", "127.0.0.1"}, "+OK")
			if !reachable(port2) {
				t.Fatal("not listening again after CONFIG SET bind 127.0.0.1")
			}
		})
	}
}
