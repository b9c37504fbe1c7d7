package commands

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

// ReplyError accounts for an error the script's result writes (the
// scripting runtime tells of each): not again when a command counted it
// already, as its own when nested in the reply; a top-level one the server
// counts as the script command's error reply.
func (run *scriptRun) ReplyError(msg string, counted, nested bool) {
	st, ok := run.ctx.Srv.(scriptStats)
	switch {
	case !ok:
	case counted:
		st.ErrorReplyCounted()
	case nested:
		st.NestedErrorReply(msg)
	}
}
