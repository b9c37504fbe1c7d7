package engine

import (
	"slices"
	"strings"
)

// Server records are state that belongs to no database: the function
// libraries FUNCTION LOAD makes. They persist like keys (the change log,
// then the store) but FLUSHALL leaves them alone, as Redis keeps functions
// across FLUSHALL. The engine only stores them by name; their owner (the
// scripting engine) gives them meaning. Use them under the lock.

// ServerRecord returns the record called name.
func (e *Engine) ServerRecord(name string) ([]byte, bool) {
	v, ok := e.server[name]
	return v, ok
}

// ServerRecordNames lists the names that start with prefix, sorted.
func (e *Engine) ServerRecordNames(prefix string) []string {
	var names []string
	for n := range e.server {
		if strings.HasPrefix(n, prefix) {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	return names
}

// PutServerRecord sets the record called name and persists it.
func (e *Engine) PutServerRecord(name string, val []byte) {
	if e.server == nil {
		e.server = map[string][]byte{}
	}
	e.server[name] = slices.Clone(val)
	e.sink.PutServer([]byte(name), val)
	e.stats.Dirty++
}

// DeleteServerRecord removes the record called name, if there is one.
func (e *Engine) DeleteServerRecord(name string) {
	if _, ok := e.server[name]; !ok {
		return
	}
	delete(e.server, name)
	e.sink.DeleteServer([]byte(name))
	e.stats.Dirty++
}

// LoadServer implements Loader.
func (l engineLoader) LoadServer(name, val []byte) error {
	if string(name) == dbMapRecord {
		return l.e.loadDBMap(val)
	}
	if l.e.server == nil {
		l.e.server = map[string][]byte{}
	}
	l.e.server[string(name)] = slices.Clone(val)
	return nil
}
