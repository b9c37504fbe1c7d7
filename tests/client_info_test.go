package tests

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// clientInfoFields picks fields of a CLIENT INFO/LIST line.
func clientInfoFields(line string, names ...string) string {
	f := map[string]string{}
	for _, kv := range strings.Fields(line) {
		k, v, _ := strings.Cut(kv, "=")
		f[k] = v
	}
	var out []string
	for _, n := range names {
		out = append(out, n+"="+f[n])
	}
	return strings.Join(out, " ")
}

// TestClientInfoBuffers compares the figures CLIENT INFO and CLIENT LIST
// give of a client's command and buffers with redis-server 7.0.15's: qbuf
// counts the bytes of the batch being run (those before the running
// command too; after a big argument only what follows it), of the commands
// a blocked client has not reached and of a command partly received;
// argv-mem the running command's arguments; multi-mem what MULTI queued;
// obl the replies not sent yet; EXEC shows as the command, with the x flag
// and its queue, while it runs the transaction; a client whose watched key
// changed has the d flag. qbuf-free and tot-mem depend on each server's
// allocations: Revolver's are only checked to be there.
func TestClientInfoBuffers(t *testing.T) {
	type probe struct {
		name   string
		batch  [][]string // sent at once; CLIENT INFO among them
		fields []string
	}
	fields := []string{"flags", "multi", "qbuf", "argv-mem", "multi-mem", "obl", "cmd"}
	probes := []probe{
		{"alone", [][]string{{"CLIENT", "INFO"}}, fields},
		{"after", [][]string{{"PING"}, {"CLIENT", "INFO"}}, fields},
		{"before", [][]string{{"CLIENT", "INFO"}, {"GET", strings.Repeat("x", 100)}}, fields},
		{"multi", [][]string{{"MULTI"}, {"SET", "a", "bbbb"}, {"GET", "abc"}, {"CLIENT", "INFO"}, {"EXEC"}}, fields},
		{"big", [][]string{{"SET", "big", strings.Repeat("x", 40000)}, {"CLIENT", "INFO"}}, []string{"qbuf", "argv-mem"}},
		{"watch", [][]string{{"WATCH", "a", "b"}, {"CLIENT", "INFO"}}, fields},
	}
	onBothServers(t, func(t *testing.T, addr string) {
		c := dialRaw(t, addr)
		var got []string
		for _, p := range probes {
			var buf []byte
			for _, args := range p.batch {
				buf = append(buf, encodeCommand(args)...)
			}
			c.conn.Write(buf)
			for range p.batch {
				v := c.read()
				line := v.Str
				if len(v.Elems) == 3 { // EXEC's: SET, GET, CLIENT INFO
					line = v.Elems[2].Str
				}
				if strings.HasPrefix(line, "id=") {
					got = append(got, p.name+": "+clientInfoFields(line, p.fields...))
					if free, _ := strconv.Atoi(clientInfoFields(line, "qbuf-free")[10:]); free <= 0 {
						t.Errorf("%s: qbuf-free %d", p.name, free)
					}
					if tot, _ := strconv.Atoi(clientInfoFields(line, "tot-mem")[8:]); tot <= 0 {
						t.Errorf("%s: tot-mem %d", p.name, tot)
					}
				}
			}
		}
		// A watched key another client changes: the d flag.
		dialRaw(t, addr).do("SET", "a", "2")
		got = append(got, "dirty: "+clientInfoFields(c.do("CLIENT", "INFO").Str, "flags"))
		c.do("UNWATCH")

		// A blocked client: the commands after the blocking one, a partial
		// one included, and the blocking command's arguments.
		b := dialRaw(t, addr)
		b.do("CLIENT", "SETNAME", "blocked")
		listed := func() string {
			for _, l := range strings.Split(c.do("CLIENT", "LIST").Str, "\n") {
				if strings.Contains(l, " name=blocked ") {
					return clientInfoFields(l, "flags", "qbuf", "argv-mem", "cmd")
				}
			}
			return "not listed"
		}
		b.conn.Write(append(encodeCommand([]string{"BLPOP", "infoq", "0"}), encodeCommand([]string{"GET", "xxxxx"})...))
		waitFor(t, 5*time.Second, "b blocked", func() bool { return strings.Contains(listed(), "flags=b ") })
		got = append(got, "blocked+get: "+listed())
		c.do("RPUSH", "infoq", "1")
		b.read()
		b.read()
		b.conn.Write(append(encodeCommand([]string{"BLPOP", "infoq", "0"}), "*2\r\n$3\r\nGET\r\n$5\r\nxx"...))
		waitFor(t, 5*time.Second, "b blocked", func() bool { return strings.Contains(listed(), "flags=b ") })
		got = append(got, "blocked+partial: "+listed())
		c.do("RPUSH", "infoq", "1")
		b.read()

		want := []string{
			"alone: flags=N multi=-1 qbuf=26 argv-mem=10 multi-mem=0 obl=0 cmd=client|info",
			"after: flags=N multi=-1 qbuf=40 argv-mem=10 multi-mem=0 obl=7 cmd=client|info",
			"before: flags=N multi=-1 qbuf=147 argv-mem=10 multi-mem=0 obl=0 cmd=client|info",
			"multi: flags=x multi=3 qbuf=107 argv-mem=4 multi-mem=80 obl=46 cmd=exec",
			"big: qbuf=26 argv-mem=10",
			"watch: flags=N multi=-1 qbuf=55 argv-mem=10 multi-mem=0 obl=5 cmd=client|info",
			"dirty: flags=d",
			"blocked+get: flags=b qbuf=24 argv-mem=11 cmd=blpop",
			"blocked+partial: flags=b qbuf=19 argv-mem=11 cmd=blpop",
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("CLIENT INFO:\n  %s\nwant (redis-server 7.0.15's)\n  %s", strings.Join(got, "\n  "),
				strings.Join(want, "\n  "))
		}
	})
}
