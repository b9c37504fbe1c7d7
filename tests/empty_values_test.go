package tests

import (
	"fmt"
	"testing"
)

// Empty channel names, patterns and payloads in pub/sub (issue 20): "" is
// a channel, a pattern (matching only the channel "") and a message like
// any other, never a missing one. The commands that return values with ""
// are in testdata/diff/empty_values*.txt; the blocked ones in
// empty_values_blocking_test.go; DELAY and UV in
// testdata/golden/empty_values.txt.
var pubsubEmptyConversation = []step{
	{0, `SUBSCRIBE ""`, 1, false},
	{0, `SUBSCRIBE "" ch`, 2, false},
	{0, `PSUBSCRIBE ""`, 1, false},
	{0, `PSUBSCRIBE "" *`, 2, false},
	{1, `PUBSUB CHANNELS`, 1, true},
	{1, `PUBSUB CHANNELS ""`, 1, false},
	{1, `PUBSUB CHANNELS *`, 1, false}, // "*" does not match "" in Redis
	{1, `PUBSUB NUMSUB "" ch`, 1, false},
	{1, `PUBSUB NUMPAT`, 1, false},
	{1, `PUBLISH "" ""`, 1, false},
	{0, "", 2, true}, // a message, and a pmessage for the pattern ""
	{1, `PUBLISH ch ""`, 1, false},
	{0, "", 2, true},
	{1, `PUBLISH other ""`, 1, false},
	{0, "", 1, false},
	{0, `UNSUBSCRIBE ""`, 1, false},
	{1, `PUBLISH "" x`, 1, false},
	{0, "", 1, false},
	{0, `PUNSUBSCRIBE ""`, 1, false},
	{1, `PUBLISH "" y`, 1, false},
	{0, `SUBSCRIBE ""`, 1, false},
	{0, `PSUBSCRIBE ""`, 1, false},
	{1, `PUBLISH "" ""`, 1, false},
	{0, "", 2, true},
	{0, `UNSUBSCRIBE`, 2, true},
	{0, `PUNSUBSCRIBE`, 2, true},
	{0, `UNSUBSCRIBE ""`, 1, false},
	{0, `PUNSUBSCRIBE ""`, 1, false},
}

func TestEmptyValuePubSubMatchesRedis(t *testing.T) {
	for _, proto := range []int{2, 3} {
		t.Run(fmt.Sprintf("RESP%d", proto), func(t *testing.T) {
			compareConversation(t, proto, 2, pubsubEmptyConversation)
		})
	}
}
