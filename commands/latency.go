package commands

import (
	"bytes"
	"strings"
)

// latencyServer is the server side of LATENCY (server/latency.go).
type latencyServer interface {
	LatencyLatest() []LatencyEvent
	LatencyHistory(event string) [][2]int64
	LatencyReset(events []string) int
	LatencyGraph(event string) (string, bool)
	LatencyDoctor() string
	LatencyHistogram(cmd *Command) (calls int64, cdf [][2]int64, ok bool)
}

func latencySub(name string, arity int, since, complexity, summary, args, tips string, run Handler) *Command {
	return &Command{Name: name, Arity: arity, Flags: "admin noscript loading stale", Group: "server", Since: since,
		Complexity: complexity, Summary: summary, Args: args, Tips: tips, Run: run}
}

const latencyTips = "nondeterministic_output;request_policy:all_nodes;response_policy:special"

// Latency is the LATENCY command: the latency monitor's events and the
// per-command latency histograms.
var Latency = []*Command{
	{Name: "latency", Arity: -2, Group: "server", Since: "2.8.13", Complexity: "Depends on subcommand.",
		Summary: "A container for latency diagnostics commands.", Subs: []*Command{
			latencySub("latest", 2, "2.8.13", "O(1)", "Returns the latest latency samples for all events.", "",
				latencyTips, latencyLatest),
			latencySub("history", 3, "2.8.13", "O(1)", "Returns timestamp-latency samples for an event.", "event",
				latencyTips, latencyHistory),
			latencySub("reset", -2, "2.8.13", "O(1)", "Resets the latency data for one or more events.", "[event...]",
				"request_policy:all_nodes;response_policy:all_succeeded", latencyReset),
			latencySub("doctor", 2, "2.8.13", "O(1)", "Returns a human-readable latency analysis report.", "",
				latencyTips, func(c *Ctx) { c.W.Verbatim("txt", c.Srv.(latencyServer).LatencyDoctor()) }),
			latencySub("graph", 3, "2.8.13", "O(1)", "Returns a latency graph for an event.", "event",
				latencyTips, latencyGraph),
			latencySub("histogram", -2, "7.0.0",
				"O(N) where N is the number of commands with latency information being retrieved.",
				"Returns the cumulative distribution of latencies of a subset or all commands.", "[command...]",
				latencyTips, latencyHistogram),
			{Name: "help", Arity: 2, Flags: "loading stale", Group: "server", Since: "2.8.13", Complexity: "O(1)",
				Summary: "Returns helpful text about the different subcommands.", Run: latencyHelp},
		}},
}

func latencyLatest(c *Ctx) {
	events := c.Srv.(latencyServer).LatencyLatest()
	c.W.Array(len(events))
	for _, e := range events {
		c.W.Array(4)
		c.W.BulkString(e.Name)
		c.W.Int(e.Time)
		c.W.Int(e.Latency)
		c.W.Int(e.Max)
	}
}

func latencyHistory(c *Ctx) {
	samples := c.Srv.(latencyServer).LatencyHistory(string(c.Args[2]))
	c.W.Array(len(samples))
	for _, s := range samples {
		c.W.Array(2)
		c.W.Int(s[0])
		c.W.Int(s[1])
	}
}

func latencyReset(c *Ctx) {
	events := make([]string, 0, len(c.Args)-2)
	for _, a := range c.Args[2:] {
		events = append(events, string(a))
	}
	c.W.Int(int64(c.Srv.(latencyServer).LatencyReset(events)))
}

func latencyGraph(c *Ctx) {
	graph, ok := c.Srv.(latencyServer).LatencyGraph(string(c.Args[2]))
	if !ok {
		c.W.Error("ERR No samples available for event '" + string(c.Args[2]) + "'")
		return
	}
	c.W.Verbatim("txt", graph)
}

// latencyHistogram replies a map of command name to {calls, histogram_usec};
// commands without calls (and unknown names) are left out, and a container
// stands for its subcommands too.
func latencyHistogram(c *Ctx) {
	srv := c.Srv.(latencyServer)
	var cmds []*Command
	var walk func(list []*Command)
	walk = func(list []*Command) {
		for _, cmd := range list {
			cmds = append(cmds, cmd)
			walk(cmd.Subcommands())
		}
	}
	if len(c.Args) == 2 {
		walk(c.Srv.Table().All())
	} else {
		for _, name := range c.Args[2:] {
			cmd := lookupFullName(c.Srv.Table(), name)
			if cmd == nil {
				continue
			}
			cmds = append(cmds, cmd)
			cmds = append(cmds, cmd.Subcommands()...)
		}
	}
	type entry struct {
		name  string
		calls int64
		cdf   [][2]int64
	}
	var out []entry
	for _, cmd := range cmds {
		if calls, cdf, ok := srv.LatencyHistogram(cmd); ok {
			out = append(out, entry{cmd.FullName(), calls, cdf})
		}
	}
	c.W.Map(len(out))
	for _, e := range out {
		c.W.BulkString(e.name)
		c.W.Map(2)
		c.W.BulkString("calls")
		c.W.Int(e.calls)
		c.W.BulkString("histogram_usec")
		c.W.Map(len(e.cdf))
		for _, b := range e.cdf {
			c.W.Int(b[0])
			c.W.Int(b[1])
		}
	}
}

// lookupFullName finds "get" or "config|get", in any case.
func lookupFullName(t *Table, name []byte) *Command {
	parent, sub, hasSub := bytes.Cut(name, []byte("|"))
	cmd := t.Get(parent)
	if cmd == nil || !hasSub {
		return cmd
	}
	if bytes.ContainsRune(sub, '|') {
		return nil
	}
	return cmd.Sub([]byte(strings.ToLower(string(sub))))
}

func latencyHelp(c *Ctx) {
	writeHelp(c, "LATENCY",
		"DOCTOR",
		"    Analyse the latency events and suggest what to do about them.",
		"GRAPH <event>",
		"    Draw the samples of <event> as an ASCII chart.",
		"HISTORY <event>",
		"    List the (time, latency) samples of <event>.",
		"LATEST",
		"    List every event with its latest sample and its all-time maximum.",
		"RESET [<event> ...]",
		"    Forget the samples of the given events, or of all events.",
		"HISTOGRAM [<command> ...]",
		"    Per command, the number of calls and the cumulative distribution of their latencies;",
		"    all commands with calls when none is given.")
}
