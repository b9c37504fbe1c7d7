package commands

import (
	"encoding/binary"
	"errors"
	"hash/crc64"
	"strconv"
)

// FUNCTION DUMP's payload is Redis's: RDB records, then the RDB version (2
// bytes) and a CRC-64 (Jones polynomial, 8 bytes), both little-endian. A
// library is the opcode RDB_OPCODE_FUNCTION2 followed by its code as an
// RDB string. Redis compresses long strings with LZF; this server writes
// them plain, which Redis reads as well, and reads both.

const (
	rdbVersion         = 10  // Redis 7.0's
	rdbOpcodeFunction2 = 245 // a library: its code
	rdbOpcodeFunction  = 246 // 7.0 release candidates: name, engine, description, code
)

// crcJones is the table of the reflected Jones polynomial
// (0xad93d23594c935a9 reversed).
var crcJones = crc64.MakeTable(0x95AC9329AC4BC9B5)

// crc64Redis is Redis's crc64(0, b): no initial or final inversion.
func crc64Redis(b []byte) uint64 { return ^crc64.Update(^uint64(0), crcJones, b) }

// dumpLibraries makes the payload of the libraries' codes.
func dumpLibraries(codes []string) []byte {
	var b []byte
	for _, code := range codes {
		b = append(b, rdbOpcodeFunction2)
		b = appendRDBLen(b, uint64(len(code)))
		b = append(b, code...)
	}
	b = binary.LittleEndian.AppendUint16(b, rdbVersion)
	return binary.LittleEndian.AppendUint64(b, crc64Redis(b))
}

func appendRDBLen(b []byte, n uint64) []byte {
	switch {
	case n < 1<<6:
		return append(b, byte(n))
	case n < 1<<14:
		return append(b, byte(n>>8)|0x40, byte(n))
	case n <= 0xFFFFFFFF:
		return binary.BigEndian.AppendUint32(append(b, 0x80), uint32(n))
	default:
		return binary.BigEndian.AppendUint64(append(b, 0x81), n)
	}
}

var errBadPayload = errors.New("DUMP payload version or checksum are wrong")

// verifyPayload checks the footer and returns the records before it.
func verifyPayload(p []byte) ([]byte, error) {
	if len(p) < 10 {
		return nil, errBadPayload
	}
	footer := p[len(p)-10:]
	if binary.LittleEndian.Uint16(footer) > rdbVersion ||
		binary.LittleEndian.Uint64(footer[2:]) != crc64Redis(p[:len(p)-8]) {
		return nil, errBadPayload
	}
	return p[:len(p)-10], nil
}

// readLibraryCodes reads the library codes of a verified payload's
// records, in Redis's error texts.
func readLibraryCodes(rec []byte) ([]string, error) {
	r := rdbReader{b: rec}
	var codes []string
	for len(r.b) > 0 {
		t := r.b[0]
		r.b = r.b[1:]
		switch t {
		case rdbOpcodeFunction2:
			code, ok := r.str()
			if !ok {
				return nil, errors.New("Failed loading library payload")
			}
			codes = append(codes, code)
		case rdbOpcodeFunction:
			code, err := r.oldFunction()
			if err != nil {
				return nil, err
			}
			codes = append(codes, code)
		default:
			return nil, errors.New("given type is not a function")
		}
	}
	return codes, nil
}

// rdbReader reads RDB lengths and strings; every read checks bounds.
type rdbReader struct{ b []byte }

// length reads a length; encoded is set, with the encoding in n, for the
// special string encodings (integers, LZF).
func (r *rdbReader) length() (n uint64, encoded, ok bool) {
	if len(r.b) == 0 {
		return 0, false, false
	}
	first := r.b[0]
	switch first >> 6 {
	case 0:
		r.b = r.b[1:]
		return uint64(first & 0x3F), false, true
	case 1:
		if len(r.b) < 2 {
			return 0, false, false
		}
		n = uint64(first&0x3F)<<8 | uint64(r.b[1])
		r.b = r.b[2:]
		return n, false, true
	case 3:
		r.b = r.b[1:]
		return uint64(first & 0x3F), true, true
	}
	switch first {
	case 0x80:
		if len(r.b) < 5 {
			return 0, false, false
		}
		n = uint64(binary.BigEndian.Uint32(r.b[1:]))
		r.b = r.b[5:]
		return n, false, true
	case 0x81:
		if len(r.b) < 9 {
			return 0, false, false
		}
		n = binary.BigEndian.Uint64(r.b[1:])
		r.b = r.b[9:]
		return n, false, true
	}
	return 0, false, false
}

func (r *rdbReader) take(n uint64) ([]byte, bool) {
	if n > uint64(len(r.b)) {
		return nil, false
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v, true
}

// str reads a string in any of RDB's encodings.
func (r *rdbReader) str() (string, bool) {
	n, encoded, ok := r.length()
	if !ok {
		return "", false
	}
	if !encoded {
		v, ok := r.take(n)
		return string(v), ok
	}
	switch n {
	case 0, 1, 2: // an integer of 1, 2 or 4 bytes, little-endian
		v, ok := r.take(1 << n)
		if !ok {
			return "", false
		}
		var i int64
		switch n {
		case 0:
			i = int64(int8(v[0]))
		case 1:
			i = int64(int16(binary.LittleEndian.Uint16(v)))
		default:
			i = int64(int32(binary.LittleEndian.Uint32(v)))
		}
		return strconv.FormatInt(i, 10), true
	case 3:
		clen, _, ok1 := r.length()
		ulen, _, ok2 := r.length()
		if !ok1 || !ok2 {
			return "", false
		}
		comp, ok := r.take(clen)
		if !ok || ulen > 512<<20 {
			return "", false
		}
		out, ok := lzfDecompress(comp, int(ulen))
		return string(out), ok
	}
	return "", false
}

// oldFunction reads a library in the format of Redis 7.0's release
// candidates and turns it into today's payload, as Redis does.
func (r *rdbReader) oldFunction() (string, error) {
	name, ok := r.str()
	if !ok {
		return "", errors.New("Failed loading library name")
	}
	engine, ok := r.str()
	if !ok {
		return "", errors.New("Failed loading engine name")
	}
	hasDesc, encoded, ok := r.length()
	if !ok || encoded {
		return "", errors.New("Failed loading library description indicator")
	}
	if hasDesc != 0 {
		if _, ok := r.str(); !ok {
			return "", errors.New("Failed loading library description")
		}
	}
	blob, ok := r.str()
	if !ok {
		return "", errors.New("Failed loading library blob")
	}
	return "#!" + engine + " name=" + name + "\n" + blob, nil
}

// lzfDecompress expands LZF data into exactly n bytes.
func lzfDecompress(in []byte, n int) ([]byte, bool) {
	out := make([]byte, 0, n)
	for i := 0; i < len(in); {
		ctrl := int(in[i])
		i++
		if ctrl < 32 { // a literal run of ctrl+1 bytes
			run := ctrl + 1
			if i+run > len(in) || len(out)+run > n {
				return nil, false
			}
			out = append(out, in[i:i+run]...)
			i += run
			continue
		}
		length := ctrl >> 5 // a back reference
		if length == 7 {
			if i >= len(in) {
				return nil, false
			}
			length += int(in[i])
			i++
		}
		if i >= len(in) {
			return nil, false
		}
		ref := len(out) - (ctrl&0x1f)<<8 - int(in[i]) - 1
		i++
		length += 2
		if ref < 0 || len(out)+length > n {
			return nil, false
		}
		for k := 0; k < length; k++ { // byte by byte: the source may overlap what it writes
			out = append(out, out[ref+k])
		}
	}
	return out, len(out) == n
}
