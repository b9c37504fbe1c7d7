package persistence

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
)

// Change log format. A segment is a magic header followed by frames; a
// frame is one group commit, written with one write(2):
//
//	segment  = "RVLOG01\n" frame*
//	frame    = len:4 crc:4 record*     len = bytes of records, crc covers len and records
//	record   = op:1 db:1 fields        lengths uvarint, header little-endian
//
// Records are engine changes rather than Pebble operations, but their
// values are already the Pebble value records (type and payload; big-endian
// deadline), so the applier uses them without copying.
const (
	segmentMagic   = "RVLOG01\n"
	frameHeaderLen = 8
	maxFrameLen    = 1<<32 - 1
)

// Record ops and their fields after op and db.
const (
	opPutValue        byte = 1 + iota // key, (type:1 payload)
	opPutExpire                       // key, at:8 big-endian
	opDeleteExpire                    // key
	opPutItem                         // key, item, val
	opDeleteItem                      // key, item
	opDeleteKey                       // key: value and expire records
	opDeleteKeyItems                  // key: every record of the key
	opFlushDB                         // (db only)
	opFlushAll                        // (db is 0)
	opDeleteItemRange                 // key, from item, to item: items in [from, to)
	opPatchValue                      // key, off uvarint, data: bytes of a string value's payload
	opPutServer                       // (db is 0) name, val: a server record
	opDeleteServer                    // (db is 0) name
)

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// frameCRC is the checksum of a frame with the given header length field.
func frameCRC(lenField, records []byte) uint32 {
	return crc32.Update(crc32.Checksum(lenField, crcTable), crcTable, records)
}

// sealFrame fills the header reserved at the start of frame.
func sealFrame(frame []byte) {
	binary.LittleEndian.PutUint32(frame[0:4], uint32(len(frame)-frameHeaderLen))
	binary.LittleEndian.PutUint32(frame[4:8], frameCRC(frame[0:4], frame[frameHeaderLen:]))
}

// Encoding helpers: each appends one field.

func appendBytes(b, v []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(v)))
	return append(b, v...)
}

func appendHead(b []byte, op byte, db int, key []byte) []byte {
	b = append(b, op, byte(db))
	return appendBytes(b, key)
}

// change is one decoded record. Its slices alias the frame.
type change struct {
	op   byte
	db   int
	key  []byte // the server record's name for opPutServer and opDeleteServer
	item []byte
	val  []byte // the Pebble value record; the range's end for opDeleteItemRange; the bytes for opPatchValue
	off  int    // opPatchValue: where in the value's payload
}

var errTruncatedRecord = errors.New("truncated record")

// recordReader decodes the records of one frame.
type recordReader struct {
	buf []byte
	off int
}

func (r *recordReader) bytes() ([]byte, error) {
	n, w := binary.Uvarint(r.buf[r.off:])
	if w <= 0 || n > uint64(len(r.buf)-r.off-w) {
		return nil, errTruncatedRecord
	}
	r.off += w
	v := r.buf[r.off : r.off+int(n)]
	r.off += int(n)
	return v, nil
}

func (r *recordReader) fixed(n int) ([]byte, error) {
	if len(r.buf)-r.off < n {
		return nil, errTruncatedRecord
	}
	v := r.buf[r.off : r.off+n]
	r.off += n
	return v, nil
}

// next decodes the next record; ok is false at the end of the frame.
func (r *recordReader) next() (c change, ok bool, err error) {
	if r.off == len(r.buf) {
		return c, false, nil
	}
	start := r.off
	defer func() {
		if err != nil {
			err = fmt.Errorf("record at frame offset %d: %w", start, err)
		}
	}()
	h, err := r.fixed(2)
	if err != nil {
		return c, false, err
	}
	c.op, c.db = h[0], int(h[1])
	switch c.op {
	case opFlushAll, opFlushDB:
		return c, true, nil
	case opPutValue, opPutExpire, opDeleteExpire, opPutItem, opDeleteItem, opDeleteKey, opDeleteKeyItems,
		opDeleteItemRange, opPatchValue, opPutServer, opDeleteServer:
	default:
		return c, false, fmt.Errorf("unknown op %#x", c.op)
	}
	if c.key, err = r.bytes(); err != nil {
		return c, false, err
	}
	switch c.op {
	case opPutValue:
		if c.val, err = r.bytes(); err == nil && len(c.val) == 0 {
			err = errors.New("value record without a type")
		}
	case opPutExpire:
		c.val, err = r.fixed(8)
	case opPutItem:
		if c.item, err = r.bytes(); err == nil {
			c.val, err = r.bytes()
		}
	case opPutServer:
		c.val, err = r.bytes()
	case opDeleteItem:
		c.item, err = r.bytes()
	case opDeleteItemRange:
		if c.item, err = r.bytes(); err == nil {
			c.val, err = r.bytes()
		}
	case opPatchValue:
		off, w := binary.Uvarint(r.buf[r.off:])
		if w <= 0 || off > maxFrameLen {
			return c, false, errTruncatedRecord
		}
		r.off += w
		c.off = int(off)
		c.val, err = r.bytes()
	}
	return c, err == nil, err
}

// frameError says why a frame is unreadable. torn marks damage that a
// crash in the middle of an append can leave at the end of the last
// segment.
type frameError struct {
	off  int64
	msg  string
	torn bool
}

func (e *frameError) Error() string { return fmt.Sprintf("offset %d: %s", e.off, e.msg) }

// scanSegment checks a whole segment and calls fn with each frame's records
// and the offset just past the frame. It returns the length of the valid
// prefix; on damage it also returns a *frameError.
func scanSegment(data []byte, fn func(records []byte, end int64) error) (int64, error) {
	if len(data) < len(segmentMagic) {
		if allZero(data) || string(data) == segmentMagic[:len(data)] {
			return 0, &frameError{off: 0, msg: "incomplete segment header", torn: true}
		}
		return 0, &frameError{off: 0, msg: "not a Revolver log segment"}
	}
	if string(data[:len(segmentMagic)]) != segmentMagic {
		return 0, &frameError{off: 0, msg: "not a Revolver log segment"}
	}
	off := int64(len(segmentMagic))
	for off < int64(len(data)) {
		rest := data[off:]
		if allZero(rest) {
			// A file extended but never written, as a crash can leave.
			return off, &frameError{off: off, msg: fmt.Sprintf("%d zero bytes", len(rest)), torn: true}
		}
		if len(rest) < frameHeaderLen {
			return off, &frameError{off: off, msg: "incomplete frame header", torn: true}
		}
		n := int64(binary.LittleEndian.Uint32(rest[0:4]))
		if n > int64(len(rest)-frameHeaderLen) {
			return off, &frameError{off: off, msg: fmt.Sprintf("frame of %d bytes cut short", n), torn: true}
		}
		end := frameHeaderLen + n
		records := rest[frameHeaderLen:end]
		if binary.LittleEndian.Uint32(rest[4:8]) != frameCRC(rest[0:4], records) {
			// Only the last frame can be half written; a bad frame with
			// data after it is damage, not a torn append.
			torn := allZero(rest[end:])
			return off, &frameError{off: off, msg: "frame checksum mismatch", torn: torn}
		}
		if fn != nil {
			if err := fn(records, off+end); err != nil {
				return off, &frameError{off: off, msg: err.Error()}
			}
		}
		off += end
	}
	return off, nil
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}
