package commands

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/revolver-db/revolver/scripting"
)

// The loaded FUNCTION libraries (Redis's functions.c): each library's
// functions are reachable by name, case-insensitively, from FCALL; a
// function belongs to exactly one library. The libraries themselves are
// made by package scripting.

// functionLoadTimeout bounds a library's top-level code (Redis's
// LOAD_TIMEOUT_MS).
const functionLoadTimeout = 500 * time.Millisecond

// libraryRecordPrefix names a library's server record: the prefix, then
// the library's name; the record holds its code.
const libraryRecordPrefix = "function:"

// loadLibrary is FUNCTION LOAD's work: make the library and link it.
func (vm *LuaVM) loadLibrary(code string, replace bool, timeout time.Duration) (*scripting.Library, error) {
	lib, err := vm.fns.CreateLibrary(code, timeout, func(name string) bool { return !replace && vm.libs[name] != nil })
	if err != nil {
		return nil, err
	}
	if err := vm.link(lib, vm.libs[lib.Name]); err != nil {
		return nil, err
	}
	return lib, nil
}

// link adds lib, replacing old (the library of the same name) if not nil,
// unless one of its functions is another library's.
func (vm *LuaVM) link(lib, old *scripting.Library) error {
	for name := range lib.Funcs {
		if f := vm.funcs[strings.ToLower(name)]; f != nil && f.Lib != old {
			return fmt.Errorf("Function %s already exists", name)
		}
	}
	if old != nil {
		vm.unlink(old)
	}
	vm.libs[lib.Name] = lib
	for name, f := range lib.Funcs {
		vm.funcs[strings.ToLower(name)] = f
	}
	return nil
}

func (vm *LuaVM) unlink(lib *scripting.Library) {
	for name := range lib.Funcs {
		delete(vm.funcs, strings.ToLower(name))
	}
	delete(vm.libs, lib.Name)
}

// sortedLibraries lists the libraries by name.
func (vm *LuaVM) sortedLibraries() []*scripting.Library {
	libs := make([]*scripting.Library, 0, len(vm.libs))
	for _, l := range vm.libs {
		libs = append(libs, l)
	}
	slices.SortFunc(libs, func(a, b *scripting.Library) int { return strings.Compare(a.Name, b.Name) })
	return libs
}

// LibraryCodes returns the libraries' code by name order, as FUNCTION DUMP
// and an RDB hold them. Under the engine lock.
func (vm *LuaVM) LibraryCodes() []string {
	var codes []string
	for _, l := range vm.sortedLibraries() {
		codes = append(codes, l.Code)
	}
	return codes
}

// flushLibraries drops every library.
func (vm *LuaVM) flushLibraries() {
	vm.libs, vm.funcs = map[string]*scripting.Library{}, map[string]*scripting.Function{}
}

// canJoin says whether libs can join the current libraries (Redis's
// libraryJoin): a library of the same name is an error unless replace,
// and a function may not be another remaining library's.
func (vm *LuaVM) canJoin(libs []*scripting.Library, replace bool) error {
	replaced := map[*scripting.Library]bool{}
	for _, lib := range libs {
		if old := vm.libs[lib.Name]; old != nil {
			if !replace {
				return fmt.Errorf("Library %s already exists", lib.Name)
			}
			replaced[old] = true
		}
	}
	for _, lib := range libs {
		for name := range lib.Funcs {
			if f := vm.funcs[strings.ToLower(name)]; f != nil && !replaced[f.Lib] {
				return fmt.Errorf("Function %s already exists", name)
			}
		}
	}
	return nil
}

// sharedFunction fails when two libraries of one payload register the
// same function.
func sharedFunction(a, b *scripting.Library) error {
	for name := range a.Funcs {
		for other := range b.Funcs {
			if strings.EqualFold(name, other) {
				return fmt.Errorf("Function %s already exists", name)
			}
		}
	}
	return nil
}

func libraryLoadError(name string, err error) error {
	return fmt.Errorf("function library %q: %w", name, err)
}
