package tests

import "testing"

// replyPushCases: to Redis, (un)subscribe confirmations and pub/sub messages
// are pushes (CLIENT_PUSHING), in RESP2 as in RESP3, so CLIENT REPLY OFF and
// SKIP do not silence them; the replies around them stay silenced, and
// those of the commands before go first.
var replyPushCases = []trackingCase{
	{"reply-off-resp2", []string{
		"s: CLIENT REPLY OFF && SUBSCRIBE ch ch2 && PSUBSCRIBE c* && SSUBSCRIBE sh", "s> 4",
		"b= PUBLISH ch hi", "s> 2", "b= SPUBLISH sh m", "s> 1",
		"s: PING && UNSUBSCRIBE ch && PUNSUBSCRIBE && SUNSUBSCRIBE && UNSUBSCRIBE && UNSUBSCRIBE && " +
			"CLIENT REPLY ON && PING x", "s> 7",
	}},
	{"reply-off-resp3", []string{
		// Subscription counts stay below 3, the first client id here: the
		// transcript names ids in pushes.
		"s: hello3",
		"s: CLIENT REPLY OFF && SUBSCRIBE ch && PSUBSCRIBE c* && SSUBSCRIBE sh", "s> 3",
		"b= PUBLISH ch hi", "s> 2", "b= SPUBLISH sh m", "s> 1",
		"s: PING && GET k && UNSUBSCRIBE ch && PUNSUBSCRIBE && SUNSUBSCRIBE && UNSUBSCRIBE && " +
			"CLIENT REPLY ON && PING x", "s> 6",
	}},
	{"reply-skip", []string{
		"s: PING a && CLIENT REPLY SKIP && SUBSCRIBE x y && PING b", "s> 4",
		"s: CLIENT REPLY SKIP && UNSUBSCRIBE x y && PING c", "s> 3",
		"t: hello3",
		"t: PING a && CLIENT REPLY SKIP && SUBSCRIBE x y && PING b", "t> 4",
		"b= PUBLISH x hi", "t> 1",
		"t: CLIENT REPLY SKIP && UNSUBSCRIBE y x && PING c", "t> 3",
	}},
	{"reply-off-multi", []string{
		// The transaction's reply is silenced, not the confirmation inside.
		"t: hello3",
		"t: CLIENT REPLY OFF && MULTI && SUBSCRIBE w && PING && EXEC && CLIENT REPLY ON && PING g", "t> 3",
		"t: UNSUBSCRIBE w", "t> 1",
		// RESET ends OFF and drops subscriptions without confirming them.
		"s: CLIENT REPLY OFF && SUBSCRIBE z && RESET && PING h", "s> 3",
	}},
}

func TestReplyOffPushes(t *testing.T) {
	runTrackingCases(t, func(t *testing.T) string { return startServer(t).Addr() }, replyPushCases)
}
