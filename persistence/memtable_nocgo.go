//go:build !cgo

package persistence

// memTablesInGoHeap: without cgo Pebble allocates its memtables in the Go
// heap.
const memTablesInGoHeap = true
