package persistence

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"strings"
)

// Change log format. A segment is a magic header followed by frames; a
// frame is one group commit, written with one write(2):
//
//	segment  = "RVLOG02\n" frame*
//	frame    = len:4 crc:4 synced:4 record*
//	record   = op:1 db:1 fields        lengths uvarint, header little-endian
//
// len is the bytes of records; crc covers len, synced and records. The
// low 31 bits of synced are how much of the segment (header included) the
// last fsync that had returned before the frame was written covered: a
// frame proves that everything before its synced offset was on disk. It
// never passes the frame's own offset; a frame starts before segmentBytes
// unless a run (below) kept the segment open, and a segment past 2 GB
// records at most 2 GB, which proves less, never more. Start-up uses it to
// tell a power cut, which loses only what no fsync covered, from damage to
// what was synced (replay.go, decision 0011). Segments of format 1
// ("RVLOG01\n", frames without synced) are still read.
//
// The top bit of synced (frameCont) says the frame ends in the middle of
// what the engine was doing: a log batch that reached its share of the
// memory cap was written before the command filling it ended (commitFull).
// The frames up to the next one without the bit are a run, which counts
// only whole: the applier gets none of it until it is complete, and
// start-up drops a run the log ends in, as the command never finished (no
// reply acknowledged any of it). Frames of format 2 written before the bit
// existed never set it (their synced offsets are under 64 MB).
//
// Records are engine changes rather than Pebble operations, but their
// values are already the Pebble value records (type and payload; big-endian
// deadline), so the applier uses them without copying.
const (
	segmentMagic     = "RVLOG02\n"
	segmentMagicV1   = "RVLOG01\n"
	frameHeaderLen   = 12
	frameHeaderLenV1 = 8
	maxFrameLen      = 1<<32 - 1
	frameCont        = 1 << 31 // in synced: a run goes on in the next frame
	maxSynced        = frameCont - 1
)

// A frame that starts before segmentBytes has room for its synced offset.
var _ = [1]struct{}{}[segmentBytes>>31]

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

// frameCRC is the checksum of a frame: over its length field, its synced
// field (format 2; empty in format 1) and its records.
func frameCRC(lenField, syncedField, records []byte) uint32 {
	c := crc32.Checksum(lenField, crcTable)
	c = crc32.Update(c, crcTable, syncedField)
	return crc32.Update(c, crcTable, records)
}

// sealFrame fills the header reserved at the start of frame; synced is
// the segment offset the last completed fsync covered (at most maxSynced),
// cont whether a run goes on in the next frame.
func sealFrame(frame []byte, synced int64, cont bool) {
	field := uint32(min(synced, maxSynced))
	if cont {
		field |= frameCont
	}
	binary.LittleEndian.PutUint32(frame[0:4], uint32(len(frame)-frameHeaderLen))
	binary.LittleEndian.PutUint32(frame[8:12], field)
	binary.LittleEndian.PutUint32(frame[4:8], frameCRC(frame[0:4], frame[8:12], frame[frameHeaderLen:]))
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

// frameError says why a segment does not read to its end. cut marks
// damage that a crash or power cut can leave where no fsync covered the
// file: an unwritten or incomplete header, a frame cut short or failing
// its checksum (a torn append, or a block the disk never wrote while it
// wrote a later one), zeros. A frame that checks but does not decode, and
// a foreign header, are never left by a crash.
type frameError struct {
	off int64
	msg string
	cut bool
}

func (e *frameError) Error() string { return fmt.Sprintf("offset %d: %s", e.off, e.msg) }

// segmentHeader checks a segment's magic and returns its frame header
// length. A header of zeros, or too short, is what a segment created just
// before a crash can be: the segment is named durably at once, and its
// header reaches the disk with its first fsync.
func segmentHeader(data []byte) (int, *frameError) {
	n := len(segmentMagic)
	if len(data) < n {
		if allZero(data) || strings.HasPrefix(segmentMagic, string(data)) || strings.HasPrefix(segmentMagicV1, string(data)) {
			return frameHeaderLen, &frameError{off: 0, msg: "incomplete segment header", cut: true}
		}
		return 0, &frameError{off: 0, msg: "not a Revolver log segment"}
	}
	switch head := string(data[:n]); {
	case head == segmentMagic:
		return frameHeaderLen, nil
	case head == segmentMagicV1:
		return frameHeaderLenV1, nil
	case allZero(data[:n]):
		return frameHeaderLen, &frameError{off: 0, msg: "segment header never written", cut: true}
	}
	return 0, &frameError{off: 0, msg: "not a Revolver log segment"}
}

// scanSegment checks a whole segment and calls fn with each frame's
// records, the offset just past the frame and whether a run goes on in the
// next frame. It returns the length of the valid prefix; on damage it also
// returns a *frameError.
func scanSegment(data []byte, fn func(records []byte, end int64, cont bool) error) (int64, error) {
	hdr, fe := segmentHeader(data)
	if fe != nil {
		return 0, fe
	}
	off := int64(len(segmentMagic))
	for off < int64(len(data)) {
		rest := data[off:]
		if allZero(rest) {
			// A file extended but never written, as a crash can leave.
			return off, &frameError{off: off, msg: fmt.Sprintf("%d zero bytes", len(rest)), cut: true}
		}
		if len(rest) < hdr {
			return off, &frameError{off: off, msg: "incomplete frame header", cut: true}
		}
		n := int64(binary.LittleEndian.Uint32(rest[0:4]))
		if n > int64(len(rest)-hdr) {
			return off, &frameError{off: off, msg: fmt.Sprintf("frame of %d bytes cut short", n), cut: true}
		}
		end := int64(hdr) + n
		records := rest[hdr:end]
		if binary.LittleEndian.Uint32(rest[4:8]) != frameCRC(rest[0:4], rest[8:hdr], records) {
			return off, &frameError{off: off, msg: "frame checksum mismatch", cut: true}
		}
		cont := false
		if hdr == frameHeaderLen {
			field := binary.LittleEndian.Uint32(rest[8:12])
			if synced := int64(field & maxSynced); synced > off {
				return off, &frameError{off: off, msg: fmt.Sprintf("frame records an fsync to offset %d, past its own start", synced)}
			}
			cont = field&frameCont != 0
		}
		if fn != nil {
			if err := fn(records, off+end, cont); err != nil {
				return off, &frameError{off: off, msg: err.Error()}
			}
		}
		off += end
	}
	return off, nil
}

// syncedPast looks past damage at offset bad of a segment for proof that
// the damage was synced: a frame that checks and records an fsync past
// bad. Such a frame was written after that fsync returned, so the frame at
// bad was on disk whole and is not what a power cut leaves. The damage may
// be in a length field, so frames after it are looked for at every offset,
// not by walking; the synced field is tested before the checksum, and the
// bytes checksummed are bounded, so the scan stays linear. Format 1
// frames record no fsync and prove nothing.
func syncedPast(data []byte, bad int64) (at, synced int64, ok bool) {
	if hdr, fe := segmentHeader(data); hdr != frameHeaderLen || (fe != nil && !fe.cut) {
		return 0, 0, false
	}
	budget := 4*int64(len(data)) + 1<<20
	for p := bad + 1; p+frameHeaderLen <= int64(len(data)); p++ {
		h := data[p : p+frameHeaderLen]
		w := int64(binary.LittleEndian.Uint32(h[8:12]) & maxSynced)
		if w <= bad || w > p {
			continue
		}
		n := int64(binary.LittleEndian.Uint32(h[0:4]))
		if n == 0 || n > int64(len(data))-p-frameHeaderLen {
			continue
		}
		if budget -= n; budget < 0 {
			return 0, 0, false
		}
		records := data[p+frameHeaderLen : p+frameHeaderLen+n]
		if binary.LittleEndian.Uint32(h[4:8]) == frameCRC(h[0:4], h[8:12], records) && checkRecords(records) == nil {
			return p, w, true
		}
	}
	return 0, 0, false
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}
