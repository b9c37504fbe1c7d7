//go:build cgo

package persistence

// memTablesInGoHeap: with cgo Pebble allocates its memtables with C's
// malloc, outside the Go heap (and so outside used_memory).
const memTablesInGoHeap = false
