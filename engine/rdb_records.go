package engine

import "encoding/binary"

// RDB records outside a key's value, for payloads that carry something
// other than one object: FUNCTION DUMP's libraries. They share the object
// codec's lengths, strings (integer and LZF encodings, bounded reads) and
// footer, so both payloads are written and checked the same way.

// RDBRecordWriter builds a payload of RDB records.
type RDBRecordWriter struct{ w rdbWriter }

// Opcode writes a record's type byte.
func (rw *RDBRecordWriter) Opcode(op byte) { rw.w.b = append(rw.w.b, op) }

// String writes s as Redis's rdbSaveRawString does (an integer or LZF
// encoding when one applies), so the bytes match redis-server's.
func (rw *RDBRecordWriter) String(s []byte) { rw.w.str(s) }

// Payload appends the RDB version and the CRC-64 and returns the payload.
func (rw *RDBRecordWriter) Payload() []byte {
	b := binary.LittleEndian.AppendUint16(rw.w.b, RDBVersion)
	return binary.LittleEndian.AppendUint64(b, rdbCRC64(b))
}

// RDBRecordReader reads the records of a payload whose footer
// VerifyDumpPayload accepted.
type RDBRecordReader struct{ r rdbReader }

// NewRDBRecordReader reads the records of payload p, footer excluded.
func NewRDBRecordReader(p []byte) *RDBRecordReader {
	return &RDBRecordReader{r: rdbReader{b: p[:max(len(p)-10, 0)]}}
}

// Opcode reads the next record's type byte; false at the end.
func (rr *RDBRecordReader) Opcode() (byte, bool) {
	if len(rr.r.b) == 0 {
		return 0, false
	}
	op := rr.r.b[0]
	rr.r.b = rr.r.b[1:]
	return op, true
}

// Length reads a plain length.
func (rr *RDBRecordReader) Length() (uint64, bool) {
	n, err := rr.r.length()
	return n, err == nil
}

// String reads a string in any of RDB's encodings.
func (rr *RDBRecordReader) String() ([]byte, bool) {
	s, err := rr.r.str()
	return s, err == nil
}
