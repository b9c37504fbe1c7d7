package console

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/revolver-db/revolver/resp"
)

// client is one connection to the server, opened for one HTTP request (or
// one event stream): every command the console runs goes through it, so it
// is checked, run, persisted, propagated and logged exactly as a command of
// any other client. It speaks RESP2.
type client struct {
	nc  net.Conn
	rd  *resp.Reader
	buf []byte
}

// replyTimeout bounds a reply's wait: a console request never hangs on a
// server busy with a slow script (it answers BUSY) or shutting down.
const replyTimeout = 10 * time.Second

func newClient(nc net.Conn) *client { return &client{nc: nc, rd: resp.NewReader(nc)} }

func (c *client) close() { c.nc.Close() }

// pipeline sends every command, then reads their replies in order. An
// error reply is a reply (Kind resp.KindError), not an error.
func (c *client) pipeline(cmds ...[]string) ([]resp.Value, error) {
	c.buf = c.buf[:0]
	for _, args := range cmds {
		c.buf = append(c.buf, '*')
		c.buf = strconv.AppendInt(c.buf, int64(len(args)), 10)
		c.buf = append(c.buf, '\r', '\n')
		for _, a := range args {
			c.buf = append(c.buf, '$')
			c.buf = strconv.AppendInt(c.buf, int64(len(a)), 10)
			c.buf = append(c.buf, '\r', '\n')
			c.buf = append(c.buf, a...)
			c.buf = append(c.buf, '\r', '\n')
		}
	}
	c.nc.SetDeadline(time.Now().Add(replyTimeout))
	if _, err := c.nc.Write(c.buf); err != nil {
		return nil, err
	}
	out := make([]resp.Value, len(cmds))
	for i := range cmds {
		v, err := c.rd.Read()
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// do runs one command and returns its reply; an error reply is returned as
// a *replyError.
func (c *client) do(args ...string) (resp.Value, error) {
	vs, err := c.pipeline(args)
	if err != nil {
		return resp.Value{}, err
	}
	if vs[0].Kind == resp.KindError {
		return vs[0], &replyError{vs[0].Str}
	}
	return vs[0], nil
}

// replyError is an error reply of the server, its text as Redis words it.
type replyError struct{ msg string }

func (e *replyError) Error() string { return e.msg }

// errorReply returns the error reply v holds, or nil.
func errorReply(v resp.Value) error {
	if v.Kind == resp.KindError {
		return &replyError{v.Str}
	}
	return nil
}

// isReplyError reports whether err is an error reply starting with code
// (NOAUTH, WRONGPASS, NOPERM, WRONGTYPE...).
func isReplyError(err error, code string) bool {
	var re *replyError
	return errors.As(err, &re) && len(re.msg) >= len(code) && re.msg[:len(code)] == code
}

// pairs reads a flat [name, value, ...] reply (QUEUE.STATS, ROOM.INFO...)
// as a map of the values' texts.
func pairs(v resp.Value) (map[string]string, error) {
	if v.Kind != resp.KindArray || len(v.Elems)%2 != 0 {
		return nil, fmt.Errorf("unexpected reply %s", v)
	}
	m := make(map[string]string, len(v.Elems)/2)
	for i := 0; i < len(v.Elems); i += 2 {
		m[v.Elems[i].Str] = text(v.Elems[i+1])
	}
	return m, nil
}

// text is a scalar reply's text: a bulk or simple string as is, an integer
// in decimal, nil as "".
func text(v resp.Value) string {
	switch v.Kind {
	case resp.KindInt:
		return strconv.FormatInt(v.Int, 10)
	case resp.KindNull:
		return ""
	}
	return v.Str
}
