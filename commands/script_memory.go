package commands

// ScriptMemory describes what the script runtime holds, for INFO memory.
type ScriptMemory struct {
	EvalScripts    int   // scripts cached by EVAL and SCRIPT LOAD
	EvalBytes      int64 // their source bytes plus their cache entries
	Libraries      int   // FUNCTION libraries
	Functions      int   // functions in them
	FunctionsBytes int64 // the libraries' code plus their entries
}

// scriptEntryOverhead approximates one cache entry beyond its source: the
// map slot, the SHA1 in hex and the struct.
const scriptEntryOverhead = 64 + 40 + 48

// MemoryStats counts the cached scripts and loaded libraries. The Lua
// states themselves allocate from Go's heap, where they are part of
// used_memory and cannot be told apart.
func (vm *LuaVM) MemoryStats() ScriptMemory {
	var m ScriptMemory
	for _, s := range vm.scripts {
		m.EvalScripts++
		m.EvalBytes += int64(len(s.body)) + scriptEntryOverhead
	}
	for _, lib := range vm.libs {
		m.Libraries++
		m.Functions += len(lib.Funcs)
		m.FunctionsBytes += int64(len(lib.Code)+len(lib.Name)) + scriptEntryOverhead*int64(1+len(lib.Funcs))
	}
	return m
}
