package commands

import (
	"strings"

	"github.com/revolver-db/revolver/engine"
)

// Scripting: EVAL and its family, and SCRIPT (Redis 7.0's eval.c). The
// scripts run in the server's LuaVM (script_*.go), atomically: under the
// engine lock, like any command.
var Scripting = []*Command{
	{Name: "eval", Arity: -3, Flags: "noscript skip_monitor may_replicate no_mandatory_keys stale",
		ACL: "scripting", Keys: "RW access update @2 #0,1,1 notes=We cannot tell how the keys will be used so we assume the worst, RW and UPDATE", Group: "scripting", Since: "2.6.0",
		Complexity: "Depends on the script that is executed.", Summary: "Executes a server-side Lua script.",
		Args: "script numkeys:integer [key...] [arg...]", Run: func(c *Ctx) { evalGeneric(c, false, false) }},
	{Name: "evalsha", Arity: -3, Flags: "noscript skip_monitor may_replicate no_mandatory_keys stale",
		ACL: "scripting", Keys: "RW access update @2 #0,1,1", Group: "scripting", Since: "2.6.0",
		Complexity: "Depends on the script that is executed.",
		Summary:    "Executes a server-side Lua script by SHA1 digest.",
		Args:       "sha1 numkeys:integer [key...] [arg...]", Run: func(c *Ctx) { evalGeneric(c, true, false) }},
	{Name: "eval_ro", Arity: -3, Flags: "noscript skip_monitor no_mandatory_keys stale readonly",
		ACL: "scripting", Keys: "RO access @2 #0,1,1 notes=We cannot tell how the keys will be used so we assume the worst, RO and ACCESS", Group: "scripting", Since: "7.0.0",
		Complexity: "Depends on the script that is executed.", Summary: "Executes a read-only server-side Lua script.",
		Args: "script numkeys:integer [key...] [arg...]", Run: func(c *Ctx) { evalGeneric(c, false, true) }},
	{Name: "evalsha_ro", Arity: -3, Flags: "noscript skip_monitor no_mandatory_keys stale readonly",
		ACL: "scripting", Keys: "RO access @2 #0,1,1", Group: "scripting", Since: "7.0.0",
		Complexity: "Depends on the script that is executed.",
		Summary:    "Executes a read-only server-side Lua script by SHA1 digest.",
		Args:       "sha1 numkeys:integer [key...] [arg...]", Run: func(c *Ctx) { evalGeneric(c, true, true) }},
	{Name: "script", Arity: -2, Group: "scripting", Since: "2.6.0", Complexity: "Depends on subcommand.",
		Summary: "A container for Lua scripts management commands.", Subs: []*Command{
			{Name: "debug", Arity: 3, Flags: "noscript", ACL: "scripting", Group: "scripting", Since: "3.2.0",
				Complexity: "O(1)", Summary: "Set the debug mode for executed scripts.", Args: "(mode=YES|SYNC|NO)",
				Run: scriptDebug},
			{Name: "load", Arity: 3, Flags: "noscript stale", ACL: "scripting", Group: "scripting", Since: "2.6.0",
				Tips:       "request_policy:all_nodes;response_policy:all_succeeded",
				Complexity: "O(N) with N being the length in bytes of the script body.",
				Summary:    "Loads a server-side Lua script to the script cache.", Args: "script", Run: scriptLoad},
			{Name: "exists", Arity: -3, Flags: "noscript", ACL: "scripting", Group: "scripting", Since: "2.6.0",
				Tips:       "request_policy:all_shards;response_policy:agg_logical_and",
				Complexity: "O(N) with N being the number of scripts to check (so checking a single script is an O(1) operation).",
				Summary:    "Determines whether server-side Lua scripts exist in the script cache.",
				Args:       "sha1...", Run: scriptExists},
			{Name: "flush", Arity: -2, Flags: "noscript", ACL: "scripting", Group: "scripting", Since: "2.6.0",
				Tips:       "request_policy:all_nodes;response_policy:all_succeeded",
				Complexity: "O(N) with N being the number of scripts in cache",
				Summary:    "Removes all server-side Lua scripts from the script cache.",
				Args:       "[flush-type=ASYNC|SYNC]", Run: scriptFlush},
			{Name: "kill", Arity: 2, Flags: "noscript allow_busy", ACL: "scripting", Group: "scripting",
				Since: "2.6.0", Tips: "request_policy:all_shards;response_policy:one_succeeded", Complexity: "O(1)",
				Summary: "Terminates a server-side Lua script during execution.", Run: scriptKill},
			{Name: "help", Arity: 2, Flags: "loading stale", ACL: "scripting", Group: "scripting", Since: "5.0.0",
				Complexity: "O(1)", Summary: "Returns helpful text about the different subcommands.", Run: scriptHelp},
		}},
}

// evalGeneric is EVAL, EVALSHA and their _RO forms.
func evalGeneric(c *Ctx, bySHA, ro bool) {
	// Replicas get the script's effects, the commands it ran, not the
	// script: it may read the time or chance.
	c.PreventPropagation()
	// Redis shows EVAL in MONITOR before anything else, so that the
	// commands the script runs follow it.
	c.Srv.FeedMonitors(c.Conn, c.DB.ID(), c.Args)
	numkeys, ok := c.Int64(2)
	switch {
	case !ok:
		return
	case numkeys > int64(len(c.Args)-3):
		c.W.Error("ERR Number of keys can't be greater than number of args")
		return
	case numkeys < 0:
		c.W.Error("ERR Number of keys can't be negative")
		return
	}
	vm := c.Srv.Lua()
	var sha string
	var s *luaScript
	if bySHA {
		// Clients send the SHA1 in lower case, as the cache keeps it.
		if s = vm.scripts[string(c.Args[1])]; s == nil {
			s = vm.scripts[strings.ToLower(string(c.Args[1]))]
		}
		if s == nil {
			c.W.Error("NOSCRIPT No matching script. Please use EVAL.")
			return
		}
		sha = s.sha
	} else {
		var err error
		if sha, s, err = vm.compile(c.Args[1]); err != nil {
			c.Error(err)
			return
		}
	}
	keys := c.Args[3 : 3+numkeys]
	vm.runScript(c, sha, s, keys, c.Args[3+numkeys:], ro)
}

func scriptLoad(c *Ctx) {
	sha, _, err := c.Srv.Lua().compile(c.Args[2])
	if err != nil {
		c.Error(err)
		return
	}
	c.W.BulkString(sha)
}

func scriptExists(c *Ctx) {
	vm := c.Srv.Lua()
	c.W.Array(len(c.Args) - 2)
	for _, sha := range c.Args[2:] {
		c.W.Int(b2i(vm.Exists(string(sha))))
	}
}

func scriptFlush(c *Ctx) {
	if len(c.Args) > 3 || len(c.Args) == 3 && !strings.EqualFold(string(c.Args[2]), "SYNC") &&
		!strings.EqualFold(string(c.Args[2]), "ASYNC") {
		c.W.Error("ERR SCRIPT FLUSH only support SYNC|ASYNC option")
		return
	}
	if n := len(c.Srv.Lua().scripts); flushAsync(c, 2) && n > engine.LazyFreeThreshold {
		c.Eng.CountLazyFreed(n)
	}
	c.Srv.Lua().Flush()
	c.W.OK()
}

// scriptKill stops a slow EVAL that has not written; it runs while the
// script yields (lua_busy.go).
func scriptKill(c *Ctx) { killScript(c, true) }

func killScript(c *Ctx, eval bool) {
	if e := c.Srv.Lua().Kill(eval); e != "" {
		c.W.Error(e)
		return
	}
	c.W.OK()
}

func scriptHelp(c *Ctx) {
	writeHelp(c, "SCRIPT",
		"DEBUG (YES|SYNC|NO)",
		"    Set the debug mode for subsequent scripts executed (only NO: there is no Lua debugger).",
		"EXISTS <sha1> [<sha1> ...]",
		"    Return information about the existence of the scripts in the script cache.",
		"FLUSH [ASYNC|SYNC]",
		"    Flush the Lua scripts cache. Very dangerous on replicas.",
		"    When called without the optional mode argument, the behavior is determined by the",
		"    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
		"    * ASYNC: Asynchronously flush the scripts cache.",
		"    * SYNC: Synchronously flush the scripts cache.",
		"KILL",
		"    Kill the currently executing Lua script.",
		"LOAD <script>",
		"    Load a script into the scripts cache without executing it.")
}
