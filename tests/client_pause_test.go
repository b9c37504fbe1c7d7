package tests

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// TestClientPauseWriteCommands runs commands under CLIENT PAUSE WRITE on
// both servers, each on its own connection, and compares which are held
// and what every one replies once the pause ends. Redis holds a command
// only once every other check let it through (an unknown command or a
// wrong arity is answered at once), judges each command of a pipeline or
// transaction by itself (queueing a write in MULTI is held, a MULTI of
// reads runs, EXEC is held when it queued a write), takes PUBLISH,
// PFCOUNT, EVAL and FCALL for writes unless their script declares
// no-writes, and counts held clients in blocked_clients with the b flag.
func TestClientPauseWriteCommands(t *testing.T) {
	const noWritesLib = "#!lua name=pausetest\n" +
		"redis.register_function{function_name='pausetest_ro', callback=function() return 1 end, flags={'no-writes'}}\n" +
		"redis.register_function('pausetest_rw', function() return 2 end)"
	type step struct {
		conn string
		args []string
	}
	steps := []step{
		{"get", []string{"GET", "k"}},
		{"pfcount", []string{"PFCOUNT", "h"}},
		{"publish", []string{"PUBLISH", "ch", "m"}},
		{"spublish", []string{"SPUBLISH", "ch", "m"}},
		{"eval", []string{"EVAL", "return 1", "0"}},
		{"eval-nw", []string{"EVAL", "#!lua flags=no-writes\nreturn 1", "0"}},
		{"eval-flags", []string{"EVAL", "#!lua\nreturn 1", "0"}},
		{"eval-ro", []string{"EVAL_RO", "return 1", "0"}},
		{"evalsha-nw", []string{"EVALSHA", "50ad2340de91fe7294d5c746ad721ff185c16fc5", "0"}},
		{"evalsha-none", []string{"EVALSHA", "ffffffffffffffffffffffffffffffffffffffff", "0"}},
		{"fcall-ro", []string{"FCALL", "pausetest_ro", "0"}},
		{"fcall-rw", []string{"FCALL", "pausetest_rw", "0"}},
		{"fcall-none", []string{"FCALL", "nosuch", "0"}},
		{"unknown", []string{"NOSUCH"}},
		{"arity", []string{"SET", "k"}},
		{"arity2", []string{"PFCOUNT"}},
		{"script-load", []string{"SCRIPT", "LOAD", "return 1"}},
		{"function-delete", []string{"FUNCTION", "DELETE", "nosuchlib"}},
		{"xgroup", []string{"XGROUP", "CREATE", "pausetest:s", "g", "$", "MKSTREAM"}},
		{"object", []string{"OBJECT", "ENCODING", "k"}},
		{"ping", []string{"PING"}},
		{"multi-ro", []string{"MULTI"}}, {"multi-ro", []string{"GET", "k"}}, {"multi-ro", []string{"EXEC"}},
		{"multi-rw", []string{"MULTI"}}, {"multi-rw", []string{"SET", "pausetest:x", "1"}},
		{"exec-rw", []string{"EXEC"}}, // queued a SET before the pause
		{"pipeline", []string{"GET", "k"}}, {"pipeline", []string{"DEL", "pausetest:x"}},
		{"pipeline", []string{"GET", "k"}},
	}
	onBothServers(t, func(t *testing.T, addr string) {
		admin := dialRaw(t, addr)
		admin.do("SET", "k", "v")
		admin.do("DEL", "pausetest:s", "pausetest:x")
		admin.do("SCRIPT", "LOAD", "#!lua flags=no-writes\nreturn 3")
		admin.do("FUNCTION", "LOAD", "REPLACE", noWritesLib)
		defer admin.do("FUNCTION", "DELETE", "pausetest")
		conns := map[string]*rawConn{}
		conn := func(name string) *rawConn {
			if conns[name] == nil {
				conns[name] = dialRaw(t, addr)
			}
			return conns[name]
		}
		conn("exec-rw").do("MULTI")
		conn("exec-rw").do("SET", "pausetest:x", "0")

		admin.do("CLIENT", "PAUSE", "20000", "WRITE")
		var log []string
		pending := map[string]int{} // replies a held connection still owes
		var order []string
		for _, st := range steps {
			c := conn(st.conn)
			c.send(st.args...)
			if pending[st.conn] > 0 {
				pending[st.conn]++ // queued behind a held command
				continue
			}
			c.conn.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
			v, err := c.rd.Read()
			if err != nil {
				log = append(log, st.conn+" "+strings.Join(st.args, " ")+": held")
				pending[st.conn] = 1
				order = append(order, st.conn)
				continue
			}
			log = append(log, st.conn+" "+strings.Join(st.args, " ")+": "+v.String())
		}
		info := admin.do("INFO", "clients").Str
		for _, l := range strings.Split(info, "\r\n") {
			if strings.HasPrefix(l, "blocked_clients:") {
				log = append(log, l)
			}
		}
		var listed []string // in Redis's list order, which is not the ids'
		for _, l := range strings.Split(admin.do("CLIENT", "LIST").Str, "\n") {
			f := map[string]string{}
			for _, kv := range strings.Fields(l) {
				k, v, _ := strings.Cut(kv, "=")
				f[k] = v
			}
			if strings.Contains(f["flags"], "b") {
				listed = append(listed, "listed: cmd="+f["cmd"]+" flags="+f["flags"]+" multi="+f["multi"]+
					" argv-mem="+f["argv-mem"])
			}
		}
		slices.Sort(listed)
		log = append(log, listed...)
		admin.do("CLIENT", "UNPAUSE")
		for _, name := range order {
			for range pending[name] {
				log = append(log, name+" after: "+conn(name).read().String())
			}
		}
		got := strings.Join(log, "\n")
		if want := clientPauseWant; got != want {
			t.Errorf("under CLIENT PAUSE WRITE:\n%s\nwant (recorded from redis-server 7.0.15):\n%s", got, want)
		}
	})
}

const clientPauseWant = `get GET k: "v"
pfcount PFCOUNT h: held
publish PUBLISH ch m: held
spublish SPUBLISH ch m: held
eval EVAL return 1 0: held
eval-nw EVAL #!lua flags=no-writes
return 1 0: (integer) 1
eval-flags EVAL #!lua
return 1 0: held
eval-ro EVAL_RO return 1 0: (integer) 1
evalsha-nw EVALSHA 50ad2340de91fe7294d5c746ad721ff185c16fc5 0: (integer) 3
evalsha-none EVALSHA ffffffffffffffffffffffffffffffffffffffff 0: held
fcall-ro FCALL pausetest_ro 0: (integer) 1
fcall-rw FCALL pausetest_rw 0: held
fcall-none FCALL nosuch 0: held
unknown NOSUCH: (error) ERR unknown command 'NOSUCH', with args beginning with: 
arity SET k: (error) ERR wrong number of arguments for 'set' command
arity2 PFCOUNT: (error) ERR wrong number of arguments for 'pfcount' command
script-load SCRIPT LOAD return 1: "e0e1f9fabfc9d4800c877a703b823ac0578ff8db"
function-delete FUNCTION DELETE nosuchlib: held
xgroup XGROUP CREATE pausetest:s g $ MKSTREAM: held
object OBJECT ENCODING k: "embstr"
ping PING: +PONG
multi-ro MULTI: +OK
multi-ro GET k: +QUEUED
multi-ro EXEC: 1) "v"
multi-rw MULTI: +OK
multi-rw SET pausetest:x 1: held
exec-rw EXEC: held
pipeline GET k: "v"
pipeline DEL pausetest:x: held
blocked_clients:13
listed: cmd=del flags=b multi=-1 argv-mem=14
listed: cmd=eval flags=b multi=-1 argv-mem=13
listed: cmd=eval flags=b multi=-1 argv-mem=19
listed: cmd=evalsha flags=b multi=-1 argv-mem=48
listed: cmd=exec flags=xb multi=1 argv-mem=4
listed: cmd=fcall flags=b multi=-1 argv-mem=12
listed: cmd=fcall flags=b multi=-1 argv-mem=18
listed: cmd=function|delete flags=b multi=-1 argv-mem=23
listed: cmd=pfcount flags=b multi=-1 argv-mem=8
listed: cmd=publish flags=b multi=-1 argv-mem=10
listed: cmd=set flags=xb multi=0 argv-mem=15
listed: cmd=spublish flags=b multi=-1 argv-mem=11
listed: cmd=xgroup|create flags=b multi=-1 argv-mem=33
pfcount after: (integer) 0
publish after: (integer) 0
spublish after: (integer) 0
eval after: (integer) 1
eval-flags after: (integer) 1
evalsha-none after: (error) NOSCRIPT No matching script. Please use EVAL.
fcall-rw after: (integer) 2
fcall-none after: (error) ERR Function not found
function-delete after: (error) ERR Library not found
xgroup after: +OK
multi-rw after: +QUEUED
exec-rw after: 1) +OK
pipeline after: (integer) 1
pipeline after: "v"`
