// Package flat stores a keyspace in memory the garbage collector never
// scans: records (key, value and metadata packed together) live in large
// pointer-free pages of an Arena, and a Table indexes them with integers.
//
// The pieces, bottom up:
//
//   - Arena: a slab allocator over 64 KiB []byte pages, one size class per
//     page, naming allocations by Handle (a 40-bit integer). Freed slots are
//     reused per class; pages whose slots are all free are released; Compact
//     moves records out of sparse pages a budget at a time.
//   - Record: the byte layout of one key (type byte, 24-bit LRU/LFU clock,
//     optional expiry, key, and the value bytes or a reference into a table
//     of objects the caller keeps).
//   - Table: an extendible hash table of 8-byte slots (hash bits + Handle)
//     in fixed-size open-addressing segments, grown and shrunk a segment at a
//     time, with a SCAN cursor that keeps Redis's guarantee and fair random
//     picks.
//   - Keyspace: an Arena and a Table together, the unit one database uses.
//
// Nothing here is safe for concurrent use; the engine calls it under its
// lock. Views (Record, the []byte of Arena.Bytes) point into pages and stay
// valid until the record is freed or moved (Set, Delete, Compact).
package flat
