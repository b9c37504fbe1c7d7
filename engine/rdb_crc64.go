package engine

import "hash/crc64"

// DUMP payloads end with Redis's CRC-64: the Jones polynomial, reflected,
// with neither an initial nor a final inversion (crc64(0, ...) in Redis's
// crc64.c). Go's crc64 inverts on the way in and out, so the inversions
// are undone around it.

// crcJonesTable is the table of the reflected Jones polynomial
// (0xad93d23594c935a9 bit-reversed).
var crcJonesTable = crc64.MakeTable(0x95AC9329AC4BC9B5)

// rdbCRC64 is Redis's crc64(0, b).
func rdbCRC64(b []byte) uint64 { return ^crc64.Update(^uint64(0), crcJonesTable, b) }
