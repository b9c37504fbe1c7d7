package commands

import (
	"strings"

	"github.com/revolver-db/revolver/scripting"
)

// CallMayWrite reports whether a call of cmd with args may write, as Redis
// 7.0 judges it before running it (getCommandFlags: CLIENT PAUSE WRITE
// holds such calls): a write or may_replicate command, except that EVAL,
// EVALSHA, FCALL and their _RO forms go by the flags their script
// declares, when it declares some and is known (a script not cached is
// judged by its shebang line, an unknown SHA1 or function by the command's
// own flags).
func (vm *LuaVM) CallMayWrite(cmd *Command, args [][]byte) bool {
	if flags, ok := vm.declaredFlags(cmd, args); ok {
		return flags&scripting.FlagNoWrites == 0
	}
	return cmd.Has(FlagWrite) || cmd.Has(FlagMayReplicate)
}

// declaredFlags returns the flags the script a call runs declares, if it
// declares any and is known without running anything.
func (vm *LuaVM) declaredFlags(cmd *Command, args [][]byte) (scripting.Flags, bool) {
	if len(args) < 2 {
		return 0, false
	}
	var flags scripting.Flags
	switch cmd.FullName() {
	case "eval", "eval_ro":
		if s := vm.scripts[sha1hex(args[1])]; s != nil {
			flags = s.flags
		} else {
			f, _, err := scripting.ParseScriptShebang(string(args[1]))
			if err != nil {
				return 0, false
			}
			flags = f
		}
	case "evalsha", "evalsha_ro":
		if len(args[1]) != 40 {
			return 0, false
		}
		s := vm.scripts[strings.ToLower(string(args[1]))]
		if s == nil {
			return 0, false
		}
		flags = s.flags
	case "fcall", "fcall_ro":
		f := vm.funcs[strings.ToLower(string(args[1]))]
		if f == nil {
			return 0, false
		}
		flags = f.Flags
	default:
		return 0, false
	}
	return flags, flags&scripting.FlagEvalCompat == 0
}
