package server

// replBacklog keeps the last repl-backlog-size bytes of the replication
// stream, so that a replica whose link dropped can continue from its offset
// (PSYNC) instead of loading everything again. It is a ring: the buffer
// grows as bytes come (a large backlog costs nothing until it fills), then
// wraps. The stream's offset is the server's (replState.offset): the
// backlog's last byte is that offset, its first offset-histlen+1.
type replBacklog struct {
	buf     []byte
	size    int
	next    int   // where the next byte goes once buf is full (len(buf) == size)
	histlen int64 // bytes held, at most size
}

// replBacklogMin is Redis's smallest backlog (CONFIG_REPL_BACKLOG_MIN_SIZE).
const replBacklogMin = 16 << 10

func newReplBacklog(size int64) *replBacklog {
	return &replBacklog{size: int(max(size, replBacklogMin))}
}

// write appends p, dropping the oldest bytes beyond the size.
func (b *replBacklog) write(p []byte) {
	b.histlen = min(b.histlen+int64(len(p)), int64(b.size))
	if len(p) > b.size {
		p = p[len(p)-b.size:]
	}
	if grow := min(b.size-len(b.buf), len(p)); grow > 0 {
		if len(b.buf)+grow > cap(b.buf) {
			nb := make([]byte, len(b.buf), min(max(2*cap(b.buf), len(b.buf)+grow, 4096), b.size))
			copy(nb, b.buf)
			b.buf = nb
		}
		b.buf = append(b.buf, p[:grow]...)
		p = p[grow:]
		b.next = len(b.buf) % b.size
	}
	for len(p) > 0 {
		n := copy(b.buf[b.next:], p)
		p = p[n:]
		b.next = (b.next + n) % b.size
	}
}

// appendTail appends the last n bytes held (n <= histlen) to dst.
func (b *replBacklog) appendTail(dst []byte, n int64) []byte {
	l := len(b.buf)
	if n <= 0 || l == 0 {
		return dst
	}
	start := (b.next - int(n) + l) % l
	if start+int(n) <= l {
		return append(dst, b.buf[start:start+int(n)]...)
	}
	dst = append(dst, b.buf[start:]...)
	return append(dst, b.buf[:int(n)-(l-start)]...)
}

// resized is the backlog at a new size, holding the most recent bytes that
// fit (CONFIG SET repl-backlog-size).
func (b *replBacklog) resized(size int64) *replBacklog {
	nb := newReplBacklog(size)
	keep := min(b.histlen, int64(nb.size))
	nb.buf = b.appendTail(make([]byte, 0, keep), keep)
	nb.histlen = keep
	nb.next = len(nb.buf) % nb.size
	return nb
}
