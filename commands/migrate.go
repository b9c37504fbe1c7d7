package commands

import (
	"bufio"
	"errors"
	"net"
	"os"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/revolver-db/revolver/engine"
	"github.com/revolver-db/revolver/resp"
)

// MIGRATE, as Redis 7.0 runs it: synchronously, holding the engine lock
// from the first lookup to the reply, so the keys cannot change between
// being serialized and being deleted (the server is blocked meanwhile, as
// Redis is; the timeout bounds each network operation). The connection
// to a target is cached for ten idle seconds with the database it has
// selected, so a run of MIGRATEs sends SELECT once, and a socket error on a
// cached connection is retried once on a fresh one, as Redis retries.

// migrateCacheTTL is how long an unused cached connection stays open.
const migrateCacheTTL = 10 * time.Second

type migrateConn struct {
	conn   net.Conn
	r      *bufio.Reader
	lastDB int64 // -1: SELECT before the next RESTORE
	idle   *time.Timer
	inUse  bool // by a MIGRATE: the idle timer leaves it alone
}

// migrateCache holds each engine's connections by "host:port".
var migrateCache = struct {
	sync.Mutex
	conns map[*engine.Engine]map[string]*migrateConn
}{conns: map[*engine.Engine]map[string]*migrateConn{}}

func migrateGetConn(e *engine.Engine, addr string, timeout time.Duration) (*migrateConn, error) {
	migrateCache.Lock()
	defer migrateCache.Unlock()
	if mc := migrateCache.conns[e][addr]; mc != nil {
		mc.inUse = true
		return mc, nil
	}
	conn, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return nil, err
	}
	mc := &migrateConn{conn: conn, r: bufio.NewReaderSize(conn, 1024), lastDB: -1, inUse: true}
	mc.idle = time.AfterFunc(migrateCacheTTL, func() { migrateExpire(e, addr, mc) })
	if migrateCache.conns[e] == nil {
		migrateCache.conns[e] = map[string]*migrateConn{}
	}
	migrateCache.conns[e][addr] = mc
	return mc, nil
}

// migrateRelease ends a MIGRATE's use of a cached connection; it is closed
// after migrateCacheTTL unless another MIGRATE uses it first.
func migrateRelease(mc *migrateConn) {
	migrateCache.Lock()
	defer migrateCache.Unlock()
	mc.inUse = false
	mc.idle.Reset(migrateCacheTTL)
}

// migrateExpire is the idle timer: it closes a connection nobody used for
// migrateCacheTTL.
func migrateExpire(e *engine.Engine, addr string, mc *migrateConn) {
	migrateCache.Lock()
	busy := mc.inUse
	migrateCache.Unlock()
	if !busy {
		migrateDrop(e, addr, mc)
	}
}

// migrateDrop closes a cached connection (an error, or idle too long).
func migrateDrop(e *engine.Engine, addr string, mc *migrateConn) {
	migrateCache.Lock()
	defer migrateCache.Unlock()
	if migrateCache.conns[e][addr] == mc {
		delete(migrateCache.conns[e], addr)
		if len(migrateCache.conns[e]) == 0 {
			delete(migrateCache.conns, e)
		}
	}
	mc.idle.Stop()
	mc.conn.Close()
}

// readLine reads one reply line within the timeout, without its CRLF.
func (mc *migrateConn) readLine(timeout time.Duration) (string, error) {
	mc.conn.SetReadDeadline(time.Now().Add(timeout))
	line, err := mc.r.ReadString('\n')
	if err != nil {
		return "", err
	}
	if len(line) >= 2 && line[len(line)-2] == '\r' {
		line = line[:len(line)-2]
	} else {
		line = line[:len(line)-1]
	}
	if line == "" {
		return "", errors.New("empty reply line")
	}
	return line, nil
}

func isTimeout(err error) bool { return errors.Is(err, os.ErrDeadlineExceeded) }

func migrateCmd(c *Ctx) {
	var copyKeys, replace bool
	var user, pass []byte
	firstKey, numKeys := 3, 1
options:
	for j := 6; j < len(c.Args); j++ {
		more := len(c.Args) - 1 - j
		switch a := c.Args[j]; {
		case is(a, "COPY"):
			copyKeys = true
		case is(a, "REPLACE"):
			replace = true
		case is(a, "AUTH"):
			if more < 1 {
				c.SyntaxError()
				return
			}
			j++
			pass = c.Args[j]
		case is(a, "AUTH2"):
			if more < 2 {
				c.SyntaxError()
				return
			}
			user, pass = c.Args[j+1], c.Args[j+2]
			j += 2
		case is(a, "KEYS"):
			if len(c.Args[3]) != 0 {
				c.W.Error("ERR When using MIGRATE KEYS option, the key argument must be set to the empty string")
				return
			}
			firstKey, numKeys = j+1, len(c.Args)-j-1
			break options
		default:
			c.SyntaxError()
			return
		}
	}
	timeoutMS, ok := c.Int64(5)
	if !ok {
		return
	}
	dbid, ok := c.Int64(4)
	if !ok {
		return
	}
	if timeoutMS <= 0 {
		timeoutMS = 1000
	}
	timeout := time.Duration(timeoutMS) * time.Millisecond
	var keys [][]byte
	for _, k := range c.Args[firstKey : firstKey+numKeys] {
		if c.DB.Read(k) != nil {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		c.W.Simple("NOKEY")
		return
	}
	addr := net.JoinHostPort(string(c.Args[1]), string(c.Args[2]))
	m := migration{c: c, addr: addr, timeout: timeout, dbid: dbid, user: user, pass: pass,
		copy: copyKeys, replace: replace, keys: keys}
	m.run()
}

type migration struct {
	c          *Ctx
	addr       string
	timeout    time.Duration
	dbid       int64
	user, pass []byte
	copy       bool
	replace    bool
	keys       [][]byte
}

func (m *migration) run() {
	c := m.c
	for mayRetry := true; ; mayRetry = false {
		mc, err := migrateGetConn(c.Eng, m.addr, m.timeout)
		if errors.Is(err, syscall.ECONNREFUSED) {
			// Redis's non-blocking connect "succeeds" on a refused
			// connection (the socket turns writable with the error), so it
			// fails at the first write, is retried, and reports writing.
			if mayRetry {
				continue
			}
			c.W.Error("IOERR error or timeout writing to target instance")
			return
		}
		if err != nil {
			c.W.Error("IOERR error or timeout connecting to the client")
			return
		}
		retry, writing, err := m.attempt(mc, mayRetry)
		migrateRelease(mc)
		if err == nil {
			return
		}
		migrateDrop(c.Eng, m.addr, mc)
		if retry && !isTimeout(err) {
			continue
		}
		how := "reading"
		if writing {
			how = "writing"
		}
		c.W.Error("IOERR error or timeout " + how + " to target instance")
		return
	}
}

// attempt sends the commands and reads the replies once. It has replied
// when err is nil; otherwise nothing was replied and retry says whether
// Redis would try again on a new connection (nothing was processed yet).
func (m *migration) attempt(mc *migrateConn, mayRetry bool) (retry, writing bool, err error) {
	c := m.c
	var cmd []byte
	if m.pass != nil {
		if m.user != nil {
			cmd = resp.AppendCommand(cmd, []byte("AUTH"), m.user, m.pass)
		} else {
			cmd = resp.AppendCommand(cmd, []byte("AUTH"), m.pass)
		}
	}
	selectDB := mc.lastDB != m.dbid
	if selectDB {
		cmd = resp.AppendCommand(cmd, []byte("SELECT"), strconv.AppendInt(nil, m.dbid, 10))
	}
	now := c.Eng.Now()
	var sent [][]byte
	for _, k := range m.keys {
		// Looked up without counting: migrateCmd's lookups counted them.
		obj := c.DB.Peek(k)
		if obj == nil {
			continue
		}
		payload, expire := engine.DumpPayload(obj), c.DB.Expire(k)
		ttl := int64(0)
		if expire != 0 {
			if ttl = expire - now; ttl < 0 {
				continue
			}
			ttl = max(ttl, 1)
		}
		args := [][]byte{[]byte("RESTORE"), k, strconv.AppendInt(nil, ttl, 10), payload}
		if m.replace {
			args = append(args, []byte("REPLACE"))
		}
		cmd = resp.AppendCommand(cmd, args...)
		sent = append(sent, k)
	}
	for pos := 0; pos < len(cmd); {
		chunk := min(len(cmd)-pos, 64<<10)
		mc.conn.SetWriteDeadline(time.Now().Add(m.timeout))
		n, err := mc.conn.Write(cmd[pos : pos+chunk])
		if err != nil || n != chunk {
			if err == nil {
				err = errors.New("short write")
			}
			return mayRetry, true, err
		}
		pos += n
	}
	var authReply, selectReply string
	if m.pass != nil {
		if authReply, err = mc.readLine(m.timeout); err != nil {
			return mayRetry, false, err
		}
	}
	if selectDB {
		if selectReply, err = mc.readLine(m.timeout); err != nil {
			return mayRetry, false, err
		}
	}
	targetErr, socketErr := false, error(nil)
	j := 0
	for ; j < len(sent); j++ {
		reply, err := mc.readLine(m.timeout)
		if err != nil {
			socketErr = err
			break
		}
		if failed := firstError(authReply, selectReply, reply); failed != "" {
			if !targetErr {
				mc.lastDB = -1
				targetErr = true
				c.W.Error("ERR Target instance replied with error: " + failed[1:])
			}
			continue
		}
		if !m.copy {
			c.DB.DeleteMigrated(sent[j])
		}
	}
	if socketErr != nil && !targetErr {
		// Retried only when not even the first reply came back.
		return mayRetry && j == 0, false, socketErr
	}
	if socketErr != nil {
		migrateDrop(c.Eng, m.addr, mc)
	}
	if !targetErr {
		mc.lastDB = m.dbid
		c.W.OK()
	}
	return false, false, nil
}

// firstError is the first of the replies that is an error, or "".
func firstError(lines ...string) string {
	for _, l := range lines {
		if l != "" && l[0] == '-' {
			return l
		}
	}
	return ""
}

// migrateKeyPositions is Redis's migrateGetKeys: the key argument, or with
// KEYS (after the options, skipping AUTH's and AUTH2's values) the keys
// after it; none when KEYS follows a non-empty key (MIGRATE's error).
func migrateKeyPositions(args [][]byte) []int {
	if len(args) < 4 {
		return nil
	}
	first, num := 3, 1
	for i := 6; i < len(args); i++ {
		switch a := args[i]; {
		case is(a, "KEYS"):
			if len(args[3]) > 0 {
				return nil
			}
			first, num = i+1, len(args)-i-1
			i = len(args)
		case is(a, "AUTH"):
			i++
		case is(a, "AUTH2"):
			i += 2
		}
	}
	pos := make([]int, num)
	for i := range pos {
		pos[i] = first + i
	}
	return pos
}
