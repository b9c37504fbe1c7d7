package flat

// hold accounts delta bytes of pages or blocks to the arena.
func (a *Arena) hold(delta int64) { a.held += delta }

// account brings the table's count of its arrays' bytes up to date after
// they changed.
func (t *Table) account() { t.accounted = t.Stats().Bytes }

// HeldBytes is the Go heap the keyspace holds: its pages (in use and
// pooled), large blocks, slot arrays and directory. The collector counts
// it as live; a server subtracts it from a collection's live heap and adds
// LiveBytes instead (engine/evict_mem.go).
func (k *Keyspace) HeldBytes() int64 { return k.arena.held + k.table.accounted }
