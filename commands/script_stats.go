package commands

import (
	lua "github.com/yuin/gopher-lua"

	"github.com/revolver-db/revolver/resp"
)

// The statistics of what a script does, as Redis 7.0 keeps them: a command
// a script calls goes through call() like a client's (INFO commandstats,
// total_commands_processed, SLOWLOG, the latency monitor), a refusal
// counts as the command's rejected call, and each error counts once in
// errorstats, where it is made: the script's own error reply does not
// count again an error a command already counted (its error table carries
// ignore_error_stats_update), while an error nested in the script's reply
// counts. The server keeps the figures (server/callstats.go); these are
// the calls the script path makes, kept apart from the interpreter so they
// carry over to a new one.

// scriptStats is the server side.
type scriptStats interface {
	// RunScriptCommand runs call (call.Cmd with call.Args, replying to
	// call.W) as a command of the running script and accounts for it.
	RunScriptCommand(call *Ctx)
	// RefuseScriptCommand counts a command the script called that was
	// refused before it ran: msg in errorstats (its code when it starts
	// with '-', else ERR) and cmd, when known, in rejected_calls.
	RefuseScriptCommand(cmd *Command, msg string)
	// NestedErrorReply counts an error written inside the command's reply.
	NestedErrorReply(msg string)
	// ErrorReplyCounted says the command's error reply was counted
	// already: the command failed, and its error counts no more.
	ErrorReplyCounted()
}

// runScriptCommand runs a command a script called.
func runScriptCommand(call *Ctx) {
	if st, ok := call.Srv.(scriptStats); ok {
		st.RunScriptCommand(call)
		return
	}
	call.Cmd.Run(call)
}

// refuseScriptCommand counts a refusal of a command a script called.
func refuseScriptCommand(srv Server, cmd *Command, msg string) {
	if st, ok := srv.(scriptStats); ok {
		st.RefuseScriptCommand(cmd, msg)
	}
}

// writeScriptErrorReply writes an error of a script's result, at depth in
// its reply, counted by the server unless counted says a command counted
// it already.
func writeScriptErrorReply(w *resp.Writer, srv Server, msg string, counted bool, depth int) {
	w.Error(msg)
	st, ok := srv.(scriptStats)
	switch {
	case !ok:
	case counted:
		st.ErrorReplyCounted()
	case depth > 0:
		st.NestedErrorReply(msg)
	}
}

// errorCounted reports whether an error table says its error was counted
// already: ignore_error_stats_update set to true (a boolean, as Redis
// reads it).
func errorCounted(t *lua.LTable) bool {
	v, ok := t.RawGetString("ignore_error_stats_update").(lua.LBool)
	return ok && bool(v)
}
