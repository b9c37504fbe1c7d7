package server

import (
	"bytes"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/revolver-db/revolver/commands"
	"github.com/revolver-db/revolver/engine"
)

// Client-side caching (CLIENT TRACKING), with Redis 7.0's behaviour. In the
// default mode the server remembers, per key name (across databases, as in
// Redis), the ids of the clients that read it; the first change of the key
// invalidates it for each of them once and forgets them. In BCAST mode
// clients register prefixes instead and hear of every changed key under
// them, gathered until the end of the engine-lock section (Redis's
// beforeSleep). Everything here runs under the engine lock.
//
// The engine hook (engine.KeyTracker) is installed only while a client
// tracks or a key or prefix is remembered, so a server nobody tracks pays a
// nil check per change and one per command.

// clientTracking is one client's CLIENT TRACKING state.
type clientTracking struct {
	on, bcast, optin, optout, noloop bool
	caching                          bool // CLIENT CACHING given for the next command
	brokenRedir                      bool // the redirect client went away
	redirect                         int64
	prefixes                         []string // BCAST prefixes, sorted
}

// bcastPrefix is one registered prefix: its clients and the keys under it
// changed in the current section, with the client that changed each last
// (nil outside a command), for NOLOOP.
type bcastPrefix struct {
	clients map[*Client]struct{}
	keys    map[string]*Client
}

type tracking struct {
	s        *Server
	active   bool        // the engine hook is installed
	live     atomic.Bool // active, for the cron, which reads it without the lock
	clients  int         // tracking_clients
	keys     map[string][]int64
	items    int // ids across keys (tracking_total_items)
	prefixes map[string]*bcastPrefix
	bcast    bool // some prefix has changed keys to send
	// current is the client whose command runs; invalidations for it wait
	// in pending until its reply is out, as Redis's
	// tracking_pending_keys (nil entry: a flush).
	current *Client
	// before is the client whose command is checked before it runs, when
	// eviction may delete keys (Redis's current_client outside call()):
	// their invalidations go out at once, except to it under NOLOOP, which
	// Redis leaves them out for.
	before       *Client
	pending      [][]byte
	pendingFor   *Client // whose pending is (a stand-in may run another client meanwhile)
	limitRetries int     // trackingLimitUsedSlots's growing effort
}

func newTracking(s *Server) *tracking {
	return &tracking{s: s, keys: map[string][]int64{}, prefixes: map[string]*bcastPrefix{}}
}

// refresh installs the engine hook while there is anything to track and
// removes it otherwise.
func (t *tracking) refresh() {
	want := t.clients > 0 || len(t.keys) > 0 || len(t.prefixes) > 0
	if want == t.active {
		return
	}
	t.active = want
	t.live.Store(want)
	if want {
		t.s.eng.SetKeyTracker(t)
	} else {
		t.s.eng.SetKeyTracker(nil)
	}
}

// TrackingOn implements commands.TrackingConn: CLIENT TRACKING ON with its
// options, validated in Redis's order. It returns the error to answer, and
// whether OK follows it anyway: Redis answers both when two new prefixes
// overlap each other after the first one.
func (c *Client) TrackingOn(o commands.TrackingOptions) (errMsg string, okToo bool) {
	cur := c.trk
	on := cur != nil && cur.on
	switch {
	case !o.BCast && len(o.Prefixes) > 0:
		return "ERR PREFIX option requires BCAST mode to be enabled", false
	case on && cur.bcast != o.BCast:
		return "ERR You can't switch BCAST mode on/off before disabling tracking for this client, " +
			"and then re-enabling it with a different mode.", false
	case o.BCast && (o.OptIn || o.OptOut):
		return "ERR OPTIN and OPTOUT are not compatible with BCAST", false
	case o.OptIn && o.OptOut:
		return "ERR You can't specify both OPTIN mode and OPTOUT mode", false
	case on && (o.OptIn && cur.optout || o.OptOut && cur.optin):
		return "ERR You can't switch OPTIN/OPTOUT mode before disabling tracking for this client, " +
			"and then re-enabling it with a different mode.", false
	}
	if o.BCast {
		errMsg, okToo = c.prefixCollision(o.Prefixes)
		if errMsg != "" && !okToo {
			return errMsg, false
		}
	}
	c.s.trk.enable(c, o)
	return errMsg, okToo
}

// prefixCollision applies Redis's check that no two prefixes of a client
// can match the same key. Redis's check of the new prefixes against each
// other reports the overlap but goes on enabling tracking unless the first
// prefix was the one overlapping; okToo says so.
func (c *Client) prefixCollision(prefixes [][]byte) (string, bool) {
	overlap := func(a, b []byte) bool {
		n := min(len(a), len(b))
		return bytes.Equal(a[:n], b[:n])
	}
	for i, p := range prefixes {
		if c.trk != nil {
			for _, old := range c.trk.prefixes {
				if overlap([]byte(old), p) {
					return "ERR Prefix '" + errText(p) + "' overlaps with an existing prefix '" + errText([]byte(old)) +
						"'. Prefixes for a single client must not overlap.", false
				}
			}
		}
		for _, q := range prefixes[i+1:] {
			if overlap(p, q) {
				return "ERR Prefix '" + errText(p) + "' overlaps with another provided prefix '" + errText(q) +
					"'. Prefixes for a single client must not overlap.", i > 0
			}
		}
	}
	return "", false
}

// errText is b as Redis prints it in an error: up to a NUL, newlines as
// spaces.
func errText(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return strings.NewReplacer("\r", " ", "\n", " ").Replace(string(b))
}

// TrackingOff implements commands.TrackingConn (CLIENT TRACKING OFF).
func (c *Client) TrackingOff() { c.s.trk.disable(c) }

// TrackingCaching implements commands.TrackingConn (CLIENT CACHING).
func (c *Client) TrackingCaching(yes bool) string {
	t := c.trk
	switch {
	case t == nil || !t.on:
		return "ERR CLIENT CACHING can be called only when the client is in tracking mode with OPTIN or OPTOUT mode enabled"
	case yes && !t.optin:
		return "ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode."
	case !yes && !t.optout:
		return "ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode."
	}
	t.caching = true
	return ""
}

// TrackingRedirect implements commands.TrackingConn: CLIENT GETREDIR.
func (c *Client) TrackingRedirect() int64 {
	if c.trk == nil || !c.trk.on {
		return -1
	}
	return c.trk.redirect
}

// TrackingInfo implements commands.TrackingConn: CLIENT TRACKINGINFO's
// flags and prefixes (the redirect is TrackingRedirect).
func (c *Client) TrackingInfo() (flags, prefixes []string) {
	t := c.trk
	if t == nil || !t.on {
		return []string{"off"}, nil
	}
	flags = []string{"on"}
	if t.bcast {
		flags = append(flags, "bcast")
	}
	if t.optin {
		flags = append(flags, "optin")
		if t.caching {
			flags = append(flags, "caching-yes")
		}
	}
	if t.optout {
		flags = append(flags, "optout")
		if t.caching {
			flags = append(flags, "caching-no")
		}
	}
	if t.noloop {
		flags = append(flags, "noloop")
	}
	if t.brokenRedir {
		flags = append(flags, "broken_redirect")
	}
	return flags, t.prefixes
}

// ClientExists implements commands.TrackingConn (REDIRECT's check).
func (c *Client) ClientExists(id int64) bool { return c.s.clients[id] != nil }

// trackingFlags are CLIENT LIST's letters for the tracking state.
func (c *Client) trackingFlags() string {
	t := c.trk
	if t == nil || !t.on {
		return ""
	}
	f := "t"
	if t.brokenRedir {
		f += "R"
	}
	if t.bcast {
		f += "B"
	}
	return f
}

func (t *tracking) enable(c *Client, o commands.TrackingOptions) {
	ct := c.trk
	if ct == nil {
		ct = &clientTracking{}
		c.trk = ct
	}
	if !ct.on {
		t.clients++
	}
	// Invalidations arrive between replies at any time: from now on every
	// byte for the client goes through its push queue.
	c.enterPushMode()
	ct.on, ct.brokenRedir = true, false
	ct.redirect = o.Redirect
	ct.bcast, ct.optin, ct.optout, ct.noloop = o.BCast, o.OptIn, o.OptOut, o.NoLoop
	if o.BCast {
		if len(o.Prefixes) == 0 {
			t.addPrefix(c, "")
		}
		for _, p := range o.Prefixes {
			t.addPrefix(c, string(p))
		}
	}
	t.refresh()
}

func (t *tracking) addPrefix(c *Client, p string) {
	bp := t.prefixes[p]
	if bp == nil {
		bp = &bcastPrefix{clients: map[*Client]struct{}{}, keys: map[string]*Client{}}
		t.prefixes[p] = bp
	}
	if _, ok := bp.clients[c]; ok {
		return
	}
	bp.clients[c] = struct{}{}
	i := sort.SearchStrings(c.trk.prefixes, p)
	c.trk.prefixes = append(c.trk.prefixes, "")
	copy(c.trk.prefixes[i+1:], c.trk.prefixes[i:])
	c.trk.prefixes[i] = p
}

// disable turns tracking off (CLIENT TRACKING OFF, RESET, disconnect). The
// keys the client read stay in the table until they change, as in Redis.
func (t *tracking) disable(c *Client) {
	ct := c.trk
	if ct == nil {
		return
	}
	for _, p := range ct.prefixes {
		if bp := t.prefixes[p]; bp != nil {
			delete(bp.clients, c)
			if len(bp.clients) == 0 {
				delete(t.prefixes, p)
			}
		}
	}
	if ct.on {
		t.clients--
	}
	c.trk = nil
	t.refresh()
}

// rememberRead is Redis's trackingRememberKeys: after a read-only command
// (or a read inside a script, with the script's keys), cmd's keys in args
// are remembered for c.
func (t *tracking) rememberRead(c *Client, cmd *commands.Command, args [][]byte) {
	ct := c.trk
	if ct == nil || !ct.on || ct.bcast || (ct.optin && !ct.caching) || (ct.optout && ct.caching) ||
		cmd.Has(commands.FlagPubSub) {
		return
	}
	pos, _, ok := cmd.GetKeys(args)
	if !ok {
		return
	}
	for _, i := range pos {
		ids := t.keys[string(args[i])] // no copy of the key for a lookup
		if !containsID(ids, c.id) {
			t.keys[string(args[i])] = append(ids, c.id)
			t.items++
		}
	}
	t.refresh()
}

func containsID(ids []int64, id int64) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

// TrackRead implements commands.TrackingConn: a read-only command inside a
// script remembers the keys the script declared.
func (c *Client) TrackRead(cmd *commands.Command, args [][]byte) {
	if c.s.trk.active {
		c.s.trk.rememberRead(c, cmd, args)
	}
}

// KeyModified implements engine.KeyTracker (Redis's trackingInvalidateKey).
func (t *tracking) KeyModified(key []byte) {
	if len(t.prefixes) > 0 {
		t.rememberBroadcast(key)
	}
	ids, ok := t.keys[string(key)]
	if !ok {
		return
	}
	t.invalidate(key, ids)
	t.items -= len(ids)
	delete(t.keys, string(key))
	t.refresh()
}

// invalidate tells each default-mode tracker in ids that key changed; the
// client whose command changed it hears after its reply (or not at all
// with NOLOOP).
func (t *tracking) invalidate(key []byte, ids []int64) {
	for _, id := range ids {
		c := t.s.clients[id]
		if c == nil || c.trk == nil || !c.trk.on || c.trk.bcast {
			continue
		}
		switch {
		case (c == t.current || c == t.before) && c.trk.noloop:
		case c == t.current:
			t.pending, t.pendingFor = append(t.pending, append([]byte{}, key...)), c
		default:
			t.send(c, keyArray(key))
		}
	}
}

func (t *tracking) rememberBroadcast(key []byte) {
	by := t.current
	if by != nil && t.s.lua.Running() {
		by = nil // Redis credits a script's writes to its own client: NOLOOP keeps them
	}
	for p, bp := range t.prefixes {
		if len(p) <= len(key) && string(key[:len(p)]) == p {
			bp.keys[string(key)] = by
			t.bcast = true
		}
	}
}

// Flushed implements engine.KeyTracker: every tracking client is told that
// everything is invalid with a null, and the table is emptied.
func (t *tracking) Flushed(async bool) {
	if async {
		t.countLazyFree()
	}
	if t.clients > 0 {
		// In connection order, as Redis walks its client list.
		var on []*Client
		for _, c := range t.s.clients {
			if c.trk != nil && c.trk.on {
				on = append(on, c)
			}
		}
		sort.Slice(on, func(i, j int) bool { return on[i].id < on[j].id })
		for _, c := range on {
			if c == t.current {
				t.pending, t.pendingFor = append(t.pending, nil), c
			} else {
				t.send(c, nullFor(c))
			}
		}
	}
	clear(t.keys)
	t.items = 0
	t.refresh()
}

// countLazyFree counts the table's keys as freed lazily, as Redis's ASYNC
// flushes free a tracking table of more than LazyFreeThreshold radix tree
// nodes.
func (t *tracking) countLazyFree() {
	if len(t.keys) == 0 {
		return
	}
	keys := make([][]byte, 0, len(t.keys))
	for k := range t.keys {
		keys = append(keys, []byte(k))
	}
	slices.SortFunc(keys, bytes.Compare)
	if engine.RaxNodeCount(keys) > engine.LazyFreeThreshold {
		t.s.eng.CountLazyFreed(len(keys))
	}
}

// BeforeUnlock implements engine.KeyTracker: the broadcast invalidations
// gathered since the lock was taken go out.
func (t *tracking) BeforeUnlock() {
	if t.bcast {
		t.broadcast()
	}
}

func (t *tracking) broadcast() {
	t.bcast = false
	names := make([]string, 0, len(t.prefixes))
	for p, bp := range t.prefixes {
		if len(bp.keys) > 0 {
			names = append(names, p)
		}
	}
	sort.Strings(names)
	for _, p := range names {
		bp := t.prefixes[p]
		keys := make([]string, 0, len(bp.keys))
		for k := range bp.keys {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		all := bcastArray(keys, bp.keys, nil)
		for c := range bp.clients {
			if c.trk.noloop {
				if own := bcastArray(keys, bp.keys, c); own != nil {
					t.send(c, own)
				}
				continue
			}
			t.send(c, all)
		}
		clear(bp.keys)
	}
}

// bcastArray encodes the keys as an array, leaving out those except changed
// last (with except nil, none); nil when none is left.
func bcastArray(keys []string, by map[string]*Client, except *Client) []byte {
	n := 0
	for _, k := range keys {
		if except == nil || by[k] != except {
			n++
		}
	}
	if n == 0 {
		return nil
	}
	b := append([]byte{'*'}, strconv.Itoa(n)...)
	b = append(b, "\r\n"...)
	for _, k := range keys {
		if except == nil || by[k] != except {
			b = appendBulk(b, k)
		}
	}
	return b
}

func appendBulk(b []byte, s string) []byte {
	b = append(b, '$')
	b = strconv.AppendInt(b, int64(len(s)), 10)
	b = append(b, "\r\n"...)
	b = append(b, s...)
	return append(b, "\r\n"...)
}

func keyArray(key []byte) []byte {
	return appendBulk([]byte("*1\r\n"), string(key))
}

// nullFor is a flush's payload: a null in the tracking client's protocol,
// even when a client of the other protocol receives it (Redis does the
// same).
func nullFor(c *Client) []byte {
	if c.w.Proto() == 3 {
		return []byte("_\r\n")
	}
	return []byte("$-1\r\n")
}

const (
	invalidateHeader = ">2\r\n$10\r\ninvalidate\r\n"
	invalidateMsg    = "*3\r\n$7\r\nmessage\r\n$20\r\n__redis__:invalidate\r\n"
)

// send is Redis's sendTrackingMessage: payload (the keys array, or a
// null) goes to c as a push in RESP3, or to the client it redirects to, as
// a push or, to a RESP2 client in pub/sub mode, as a message on
// __redis__:invalidate. A redirect to a client that is gone marks c's
// redirect broken and tells c, in RESP3.
func (t *tracking) send(c *Client, payload []byte) {
	to, redirected := c, false
	if id := c.trk.redirect; id != 0 {
		r := t.s.clients[id]
		if r == nil {
			c.trk.brokenRedir = true
			if c.w.Proto() == 3 {
				b := append([]byte(">2\r\n$21\r\ntracking-redir-broken\r\n:"), strconv.FormatInt(id, 10)...)
				c.deliverPush(append(b, "\r\n"...))
			}
			return
		}
		to, redirected = r, true
	}
	var b []byte
	switch {
	case to.w.Proto() == 3:
		b = append([]byte(invalidateHeader), payload...)
	case redirected && to.Subscriptions() > 0:
		b = append([]byte(invalidateMsg), payload...)
	default:
		return // a RESP2 connection cannot take a push
	}
	to.deliverPush(b)
}

// deliverPush queues a push for c, whoever runs. A client in push mode
// takes it in order with its replies; another (a RESP3 client others
// redirect to) gets it after the replies it already has, and switches to
// push mode at its next batch.
func (c *Client) deliverPush(b []byte) {
	if c.pushMode {
		c.push(b)
		return
	}
	if c.killed.Load() {
		return
	}
	c.outMu.Lock()
	c.pending = append(c.pending, b...)
	c.aside.Store(true)
	c.outMu.Unlock()
	c.loop.post(c, postFlush)
}

// sendAside sends the pushes deliverPush queued for a client not in push
// mode. On the client's loop, after its replies.
func (c *Client) sendAside() {
	c.outMu.Lock()
	b := c.pending
	c.pending = nil
	c.aside.Store(false)
	c.outMu.Unlock()
	c.send(b)
}

// limitTable runs before a command of a client (not one inside EXEC), and
// from the cron: Redis keeps the table within tracking-table-max-keys then.
func (t *tracking) limitTable() {
	max := t.s.cfg.TrackingTableMaxKeys
	if max <= 0 || int64(len(t.keys)) <= max {
		t.limitRetries = 0
		return
	}
	// As Redis, forget keys in random order, telling their readers as if
	// they changed, with an effort growing each time it is not enough.
	effort := 100 * (t.limitRetries + 1)
	for key, ids := range t.keys {
		if effort == 0 {
			break
		}
		effort--
		t.invalidate([]byte(key), ids)
		t.items -= len(ids)
		delete(t.keys, key)
		if int64(len(t.keys)) <= max {
			t.limitRetries = 0
			t.refresh()
			return
		}
	}
	t.limitRetries++
	t.refresh()
}

// cron applies tracking-table-max-keys on an idle server too (after a
// CONFIG SET lowered it), as Redis's serverCron does.
func (t *tracking) cron() {
	if !t.live.Load() {
		return
	}
	t.s.eng.Lock()
	if t.active {
		t.limitTable()
	}
	t.s.eng.Unlock()
}

// afterCommand runs after a command ran under runCommand: a read-only
// command remembers its keys for a tracking client, and at the top level
// the invalidations for the client itself go out, after its reply.
func (t *tracking) afterCommand(c *Client, cmd *commands.Command, args [][]byte) {
	if cmd.Has(commands.FlagReadonly) && c.trk != nil {
		switch cmd.FullName() {
		case "eval_ro", "evalsha_ro", "fcall_ro": // their reads inside remember the keys
		default:
			t.rememberRead(c, cmd, args)
		}
	}
	if c.inExec || len(t.pending) == 0 || t.pendingFor != c {
		return
	}
	pending := t.pending
	t.pending, t.pendingFor = nil, nil
	t.sendPending(c, pending)
}

// sendPending sends c the invalidations its own command caused (nil: a
// flush), now that its reply is out.
func (t *tracking) sendPending(c *Client, pending [][]byte) {
	for _, key := range pending {
		if c.trk == nil || !c.trk.on || c.gone {
			continue
		}
		if key == nil {
			t.send(c, nullFor(c))
		} else {
			t.send(c, keyArray(key))
		}
	}
}

// trackingScope is the state a served client's turn as the current client
// sets aside.
type trackingScope struct {
	active     bool
	current    *Client
	pending    [][]byte
	pendingFor *Client
}

// enter makes c the current client while its blocked command is served,
// as Redis's current_client is the receiver then: the invalidations for c
// wait until its reply, and NOLOOP leaves out its own changes.
func (t *tracking) enter(c *Client) trackingScope {
	prev := trackingScope{active: true, current: t.current, pending: t.pending, pendingFor: t.pendingFor}
	t.current, t.pending, t.pendingFor = c, nil, nil
	return prev
}

// leave restores what enter set aside and returns the invalidations for c
// that wait for its reply.
func (t *tracking) leave(c *Client, prev trackingScope) [][]byte {
	var mine [][]byte
	if t.pendingFor == c {
		mine = t.pending
	}
	t.current, t.pending, t.pendingFor = prev.current, prev.pending, prev.pendingFor
	return mine
}

// CLIENT REPLY state (Client.replyMode): OFF drops every reply until ON;
// SKIP drops the next command's; a push still goes out, as in Redis.
const (
	replyOff      uint8 = 1 << iota
	replySkip           // drop this command's reply
	replySkipNext       // CLIENT REPLY SKIP ran: drop the next one's
)

// SetReplyMode implements commands.TrackingConn (CLIENT REPLY).
func (c *Client) SetReplyMode(mode string) {
	switch mode {
	case "on":
		c.replyMode &^= replyOff | replySkip
	case "off":
		c.replyMode |= replyOff
	case "skip":
		if c.replyMode&replyOff == 0 {
			c.replyMode |= replySkipNext
		}
	}
}

// quiet reports whether the reply being made is dropped.
func (c *Client) quiet() bool { return c.replyMode&(replyOff|replySkip) != 0 }

// afterTopCommand is Redis's resetClient for the state here: after each
// command a client sent (not those inside EXEC), the reply is dropped if
// CLIENT REPLY says so, SKIP moves on, and CLIENT CACHING's flag ends
// unless a transaction is open or the command was a CLIENT one. mark is
// where the command's reply began.
func (c *Client) afterTopCommand(args [][]byte, mark int) {
	if c.replyMode != 0 {
		if !c.pushMode && c.quiet() && c.w.Len() >= mark {
			c.w.Truncate(mark) // in push mode queueReplies dropped it
		}
		skip := c.replyMode&replySkipNext != 0
		c.replyMode &^= replySkip | replySkipNext
		if skip {
			c.replyMode |= replySkip
		}
	}
	if c.trk != nil && c.trk.caching && !c.multi && !strings.EqualFold(string(args[0]), "client") {
		c.trk.caching = false
	}
}
