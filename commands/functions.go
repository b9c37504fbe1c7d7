package commands

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/revolver-db/revolver/engine"
	"github.com/revolver-db/revolver/glob"
	"github.com/revolver-db/revolver/scripting"
)

// Functions: FCALL, FCALL_RO and FUNCTION (Redis 7.0's functions.c). The
// libraries live in the LuaVM (script_library.go); each
// is persisted as a server record holding its code, so libraries survive
// restarts and FLUSHALL, as in Redis.
var Functions = []*Command{
	{Name: "fcall", Arity: -3, Flags: "noscript skip_monitor may_replicate no_mandatory_keys stale",
		ACL: "scripting", Keys: "RW access update @2 #0,1,1 notes=We cannot tell how the keys will be used so we assume the worst, RW and UPDATE",
		Group: "scripting", Since: "7.0.0", Complexity: "Depends on the function that is executed.",
		Summary: "Invoke a function", Args: "function numkeys:integer [key...] [arg...]",
		Run: func(c *Ctx) { fcallGeneric(c, false) }},
	{Name: "fcall_ro", Arity: -3, Flags: "noscript skip_monitor no_mandatory_keys stale readonly",
		ACL: "scripting", Keys: "RO access @2 #0,1,1 notes=We cannot tell how the keys will be used so we assume the worst, RO and ACCESS",
		Group: "scripting", Since: "7.0.0", Complexity: "Depends on the function that is executed.",
		Summary: "Invoke a read-only function", Args: "function numkeys:integer [key...] [arg...]",
		Run: func(c *Ctx) { fcallGeneric(c, true) }},
	{Name: "function", Arity: -2, Group: "scripting", Since: "7.0.0", Complexity: "Depends on subcommand.",
		Summary: "A container for function commands", Subs: []*Command{
			{Name: "load", Arity: -3, Flags: "noscript write denyoom", ACL: "scripting", Group: "scripting",
				Since: "7.0.0", Tips: "request_policy:all_shards;response_policy:all_succeeded",
				Complexity: "O(1) (considering compilation time is redundant)",
				Summary:    "Create a function with the given arguments (name, code, description)",
				Args:       "[REPLACE] function-code", Run: functionLoad},
			{Name: "list", Arity: -2, Flags: "noscript", ACL: "scripting", Group: "scripting", Since: "7.0.0",
				Tips: "nondeterministic_output_order", Complexity: "O(N) where N is the number of functions",
				Summary: "List information about all the functions",
				Args:    "[LIBRARYNAME library-name-pattern] [WITHCODE]", Run: functionList},
			{Name: "delete", Arity: 3, Flags: "noscript write", ACL: "scripting", Group: "scripting", Since: "7.0.0",
				Tips:       "request_policy:all_shards;response_policy:all_succeeded",
				Complexity: "O(1)", Summary: "Delete a function by name", Args: "library-name", Run: functionDelete},
			{Name: "flush", Arity: -2, Flags: "noscript write", ACL: "scripting", Group: "scripting", Since: "7.0.0",
				Tips:       "request_policy:all_shards;response_policy:all_succeeded",
				Complexity: "O(N) where N is the number of functions deleted", Summary: "Deleting all functions",
				Args: "[async=ASYNC|SYNC]", Run: functionFlush},
			{Name: "dump", Arity: 2, Flags: "noscript", ACL: "scripting", Group: "scripting", Since: "7.0.0",
				Complexity: "O(N) where N is the number of functions",
				Summary:    "Dump all functions into a serialized binary payload", Run: functionDump},
			{Name: "restore", Arity: -3, Flags: "noscript write denyoom", ACL: "scripting", Group: "scripting",
				Since: "7.0.0", Tips: "request_policy:all_shards;response_policy:all_succeeded",
				Complexity: "O(N) where N is the number of functions on the payload",
				Summary:    "Restore all the functions on the given payload",
				Args:       "serialized-value [policy=FLUSH|APPEND|REPLACE]", Run: functionRestore},
			{Name: "stats", Arity: 2, Flags: "noscript allow_busy", ACL: "scripting", Group: "scripting",
				Since: "7.0.0", Tips: "nondeterministic_output;request_policy:all_shards;response_policy:special",
				Complexity: "O(1)",
				Summary:    "Return information about the function currently running (name, description, duration)",
				Run:        functionStats},
			{Name: "kill", Arity: 2, Flags: "noscript allow_busy", ACL: "scripting", Group: "scripting",
				Since: "7.0.0", Tips: "request_policy:all_shards;response_policy:one_succeeded", Complexity: "O(1)",
				Summary: "Kill the function currently in execution.", Run: functionKill},
			{Name: "help", Arity: 2, Flags: "loading stale", ACL: "scripting", Group: "scripting", Since: "7.0.0",
				Complexity: "O(1)", Summary: "Show helpful text about the different subcommands", Run: functionHelp},
		}},
}

func fcallGeneric(c *Ctx, ro bool) {
	c.PreventPropagation()                        // its effects go instead, as EVAL's
	c.Srv.FeedMonitors(c.Conn, c.DB.ID(), c.Args) // before the function's commands, as EVAL
	vm := c.Srv.Lua()
	f := vm.funcs[strings.ToLower(string(c.Args[1]))]
	if f == nil {
		c.W.Error("ERR Function not found")
		return
	}
	numkeys, ok := engine.ParseInt(c.Args[2])
	switch {
	case !ok:
		c.W.Error("ERR Bad number of keys provided")
		return
	case numkeys > int64(len(c.Args)-3):
		c.W.Error("ERR Number of keys can't be greater than number of args")
		return
	case numkeys < 0:
		c.W.Error("ERR Number of keys can't be negative")
		return
	}
	vm.callFunction(c, f, c.Args[3:3+numkeys], c.Args[3+numkeys:], ro)
}

func functionLoad(c *Ctx) {
	replace := false
	i := 2
	for ; i < len(c.Args)-1; i++ {
		if !strings.EqualFold(string(c.Args[i]), "replace") {
			c.W.Error(fmt.Sprintf("ERR Unknown option given: %s", c.Args[i]))
			return
		}
		replace = true
	}
	if i >= len(c.Args) {
		c.W.Error("ERR Function code is missing")
		return
	}
	lib, err := c.Srv.Lua().loadLibrary(string(c.Args[i]), replace, functionLoadTimeout)
	if err != nil {
		c.W.Error("ERR " + err.Error())
		return
	}
	c.Eng.PutServerRecord(libraryRecordPrefix+lib.Name, []byte(lib.Code))
	c.W.BulkString(lib.Name)
}

func functionList(c *Ctx) {
	withCode, pattern, filtered := false, "", false
	for i := 2; i < len(c.Args); i++ {
		arg := string(c.Args[i])
		switch {
		case !withCode && strings.EqualFold(arg, "withcode"):
			withCode = true
		case !filtered && strings.EqualFold(arg, "libraryname"):
			if i == len(c.Args)-1 {
				c.W.Error("ERR library name argument was not given")
				return
			}
			i++
			pattern, filtered = string(c.Args[i]), true
		default:
			c.W.Error("ERR Unknown argument " + arg)
			return
		}
	}
	var libs []*scripting.Library
	for _, l := range c.Srv.Lua().sortedLibraries() {
		if !filtered || glob.MatchFold(pattern, l.Name) {
			libs = append(libs, l)
		}
	}
	c.W.Array(len(libs))
	for _, l := range libs {
		c.W.Map(3 + int(b2i(withCode)))
		c.W.BulkString("library_name")
		c.W.BulkString(l.Name)
		c.W.BulkString("engine")
		c.W.BulkString("LUA")
		c.W.BulkString("functions")
		names := slices.Sorted(maps.Keys(l.Funcs))
		c.W.Array(len(names))
		for _, n := range names {
			f := l.Funcs[n]
			c.W.Map(3)
			c.W.BulkString("name")
			c.W.BulkString(f.Name)
			c.W.BulkString("description")
			if f.HasDesc {
				c.W.BulkString(f.Desc)
			} else {
				c.W.Null()
			}
			c.W.BulkString("flags")
			writeFunctionFlags(c, f.Flags)
		}
		if withCode {
			c.W.BulkString("library_code")
			c.W.BulkString(l.Code)
		}
	}
}

// writeFunctionFlags writes a function's flags as a set of statuses, in
// Redis's order.
func writeFunctionFlags(c *Ctx, flags scripting.Flags) {
	n := 0
	for _, d := range scripting.FlagNames {
		if flags&d.Flag != 0 {
			n++
		}
	}
	c.W.Set(n)
	for _, d := range scripting.FlagNames {
		if flags&d.Flag != 0 {
			c.W.Simple(d.Name)
		}
	}
}

func functionDelete(c *Ctx) {
	vm := c.Srv.Lua()
	lib := vm.libs[string(c.Args[2])]
	if lib == nil {
		c.W.Error("ERR Library not found")
		return
	}
	vm.unlink(lib)
	c.Eng.DeleteServerRecord(libraryRecordPrefix + lib.Name)
	c.W.OK()
}

func functionFlush(c *Ctx) {
	switch {
	case len(c.Args) > 3:
		subcommandSyntaxError(c)
		return
	case len(c.Args) == 3 && !strings.EqualFold(string(c.Args[2]), "sync") &&
		!strings.EqualFold(string(c.Args[2]), "async"):
		c.W.Error("ERR FUNCTION FLUSH only supports SYNC|ASYNC option")
		return
	}
	if n := len(c.Srv.Lua().funcs); flushAsync(c, 2) && n > engine.LazyFreeThreshold {
		c.Eng.CountLazyFreed(n)
	}
	flushLibraries(c)
	c.W.OK()
}

// flushLibraries drops every library and its record.
func flushLibraries(c *Ctx) { c.Srv.Lua().flushStoredLibraries(c.Eng) }

// flushStoredLibraries drops every library and its record.
func (vm *LuaVM) flushStoredLibraries(eng *engine.Engine) {
	for name := range vm.libs {
		eng.DeleteServerRecord(libraryRecordPrefix + name)
	}
	vm.flushLibraries()
}

// restoreLibraries is FUNCTION RESTORE's work: the libraries are made
// first, apart; then they join the current ones all or nothing, by the
// policy (append, replace or flush).
func (vm *LuaVM) restoreLibraries(eng *engine.Engine, codes []string, policy string) error {
	made := map[string]*scripting.Library{}
	var order []*scripting.Library
	for _, code := range codes {
		lib, err := vm.fns.CreateLibrary(code, 0, func(name string) bool { return made[name] != nil })
		if err == nil {
			for _, other := range order {
				if err = sharedFunction(lib, other); err != nil {
					break
				}
			}
		}
		if err != nil {
			return err
		}
		made[lib.Name] = lib
		order = append(order, lib)
	}
	if policy == "flush" {
		vm.flushStoredLibraries(eng)
	} else if err := vm.canJoin(order, policy == "replace"); err != nil {
		return err
	}
	for _, lib := range order {
		if err := vm.link(lib, vm.libs[lib.Name]); err != nil { // canJoin checked this
			return err
		}
		eng.PutServerRecord(libraryRecordPrefix+lib.Name, []byte(lib.Code))
	}
	return nil
}

// ReplaceLibraries makes codes the only libraries, as a replica's full
// sync loads its master's. Under the engine lock.
func (vm *LuaVM) ReplaceLibraries(eng *engine.Engine, codes []string) error {
	return vm.restoreLibraries(eng, codes, "flush")
}

func functionDump(c *Ctx) {
	var codes []string
	for _, l := range c.Srv.Lua().sortedLibraries() {
		codes = append(codes, l.Code)
	}
	c.W.Bulk(dumpLibraries(codes))
}

func functionRestore(c *Ctx) {
	if len(c.Args) > 4 {
		subcommandSyntaxError(c)
		return
	}
	policy := "append"
	if len(c.Args) == 4 {
		policy = strings.ToLower(string(c.Args[3]))
		if policy != "append" && policy != "replace" && policy != "flush" {
			c.W.Error("ERR Wrong restore policy given, value should be either FLUSH, APPEND or REPLACE.")
			return
		}
	}
	codes, err := readLibraryCodes(c.Args[2])
	if err != nil {
		c.W.Error(err.Error())
		return
	}
	if err := c.Srv.Lua().restoreLibraries(c.Eng, codes, policy); err != nil {
		c.W.Error("ERR " + err.Error())
		return
	}
	c.W.OK()
}

func functionStats(c *Ctx) {
	vm := c.Srv.Lua()
	run := vm.watch.run.Load()
	if yielding, _ := vm.Yielding(); !yielding {
		run = nil // a command runs between scripts, or while one yields
	}
	if run != nil && run.eval {
		c.W.Error(busyEvalError)
		return
	}
	c.W.Map(2)
	c.W.BulkString("running_script")
	if run == nil {
		c.W.Null()
	} else {
		c.W.Map(3)
		c.W.BulkString("name")
		c.W.BulkString(run.funcname)
		c.W.BulkString("command")
		c.W.Array(len(run.ctx.Args))
		for _, a := range run.ctx.Args {
			c.W.Bulk(a)
		}
		c.W.BulkString("duration_ms")
		c.W.Int(time.Since(run.start).Milliseconds())
	}
	c.W.BulkString("engines")
	c.W.Map(1)
	c.W.BulkString("LUA")
	c.W.Map(2)
	c.W.BulkString("libraries_count")
	c.W.Int(int64(len(vm.libs)))
	c.W.BulkString("functions_count")
	c.W.Int(int64(len(vm.funcs)))
}

func functionKill(c *Ctx) { killScript(c, false) }

func functionHelp(c *Ctx) {
	writeHelp(c, "FUNCTION",
		"LOAD [REPLACE] <FUNCTION CODE>",
		"    Create a new library with the given library name and code.",
		"DELETE <LIBRARY NAME>",
		"    Delete the given library.",
		"LIST [LIBRARYNAME PATTERN] [WITHCODE]",
		"    Return general information on all the libraries:",
		"    * Library name",
		"    * The engine used to run the Library",
		"    * Library description",
		"    * Functions list",
		"    * Library code (if WITHCODE is given)",
		"    It also possible to get only function that matches a pattern using LIBRARYNAME argument.",
		"STATS",
		"    Return information about the current function running:",
		"    * Function name",
		"    * Command used to run the function",
		"    * Duration in MS that the function is running",
		"    If no function is running, return nil",
		"    In addition, returns a list of available engines.",
		"KILL",
		"    Kill the current running function.",
		"FLUSH [ASYNC|SYNC]",
		"    Delete all the libraries.",
		"    When called without the optional mode argument, the behavior is determined by the",
		"    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
		"    * ASYNC: Asynchronously flush the libraries.",
		"    * SYNC: Synchronously flush the libraries.",
		"DUMP",
		"    Return a serialized payload representing the current libraries, can be restored using FUNCTION RESTORE command",
		"RESTORE <PAYLOAD> [FLUSH|APPEND|REPLACE]",
		"    Restore the libraries represented by the given payload, it is possible to give a restore policy to",
		"    control how to handle existing libraries (default APPEND):",
		"    * FLUSH: delete all existing libraries.",
		"    * APPEND: appends the restored libraries to the existing libraries. On collision, abort.",
		"    * REPLACE: appends the restored libraries to the existing libraries, On collision, replace the old",
		"      libraries with the new libraries (notice that even on this option there is a chance of failure",
		"      in case of functions name collision with another library).")
}
