package persistence

// DefaultMaxMemory is the default of Options.MaxMemory.
const DefaultMaxMemory = 32 << 20

// MinMaxMemory is the smallest cap Open and SetMaxMemory accept; a smaller
// value is raised to it.
const MinMaxMemory = 4 << 20

// memTableStopWrites is Pebble's MemTableStopWritesThreshold: a flush of
// one memtable may run while the next fills, and no more.
const memTableStopWrites = 2

// budget splits the cap on what the store holds for recent writes
// (Options.MaxMemory) between the parts that hold them. The log itself,
// on disk, is what makes a write durable; everything here only speeds up
// getting it into Pebble, so each part has a fixed share and waits (or
// makes its producer wait) rather than grow. The shares add up to about
// 80% of the cap, counting the growth of buffers that double; the rest
// covers a record that overshoots a share and Pebble's memtable sizes
// being read after the fact.
type budget struct {
	total int64
	// logBatch: a log batch is committed once its records reach it, by
	// the change call that filled it. There are two batch buffers (one
	// open, one being written).
	logBatch int
	// read: the applier reads the log back in pieces of this many bytes
	// (a frame larger than that whole).
	read int
	// window: the apply window's scratch (keys, entries, sort buffer)
	// before it goes to Pebble.
	window int
	// batch: a window goes to Pebble once the memtable space its
	// operations take reaches this (window.full), which keeps every Pebble
	// batch under half a memtable: Pebble copies such a batch into its
	// memtable, where a larger one would be kept whole in the Go heap
	// until a flush (pebble_heap.go). The batch's buffer doubles as it
	// grows, so it may take twice this.
	batch int
	// held: patched values held between windows (window.held).
	held int
	// memTable is Pebble's MemTableSize, fixed when the store is opened;
	// memTableStopWrites of them at most exist at once.
	memTable int64
}

// newBudget splits total (raised to MinMaxMemory); memTable is Pebble's
// memtable size, or 0 to take its share of total.
func newBudget(total, memTable int64) budget {
	total = max(total, MinMaxMemory)
	if memTable <= 0 {
		memTable = memTableSizeFor(total)
	}
	return budget{
		total:    total,
		logBatch: int(total / 32),
		read:     int(total / 32),
		window:   int(total / 16),
		batch:    int(memTable * 2 / 5),
		held:     int(total / 4),
		memTable: memTable,
	}
}

// memTableSizeFor is Pebble's memtable size under a cap: a quarter of it
// for the memTableStopWrites memtables. Pebble allows up to 4 GB.
func memTableSizeFor(total int64) int64 {
	return min(max(total, MinMaxMemory)/(4*memTableStopWrites), 1<<30)
}
