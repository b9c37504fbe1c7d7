package commands

import (
	"errors"

	"github.com/revolver-db/revolver/engine"
)

// FUNCTION DUMP's payload is Redis's: RDB records, then the RDB version and
// a CRC-64, through the engine's RDB codec (engine/rdb_records.go). A
// library is the opcode RDB_OPCODE_FUNCTION2 followed by its code as an
// RDB string, LZF-compressed as Redis compresses it.

const (
	rdbOpcodeFunction2 = 245 // a library: its code
	rdbOpcodeFunction  = 246 // 7.0 release candidates: name, engine, description, code
)

// dumpLibraries makes the payload of the libraries' codes.
func dumpLibraries(codes []string) []byte {
	var w engine.RDBRecordWriter
	for _, code := range codes {
		w.Opcode(rdbOpcodeFunction2)
		w.String([]byte(code))
	}
	return w.Payload()
}

// readLibraryCodes reads the library codes of a payload, in Redis's error
// texts.
func readLibraryCodes(p []byte) ([]string, error) {
	if err := engine.VerifyDumpPayload(p); err != nil {
		return nil, err
	}
	r := engine.NewRDBRecordReader(p)
	var codes []string
	for {
		op, more := r.Opcode()
		if !more {
			return codes, nil
		}
		switch op {
		case rdbOpcodeFunction2:
			code, ok := r.String()
			if !ok {
				return nil, errors.New("ERR Failed loading library payload")
			}
			codes = append(codes, string(code))
		case rdbOpcodeFunction:
			code, err := oldFunction(r)
			if err != nil {
				return nil, err
			}
			codes = append(codes, code)
		default:
			return nil, errors.New("ERR given type is not a function")
		}
	}
}

// oldFunction reads a library in the format of Redis 7.0's release
// candidates and turns it into today's payload, as Redis does.
func oldFunction(r *engine.RDBRecordReader) (string, error) {
	name, ok := r.String()
	if !ok {
		return "", errors.New("ERR Failed loading library name")
	}
	eng, ok := r.String()
	if !ok {
		return "", errors.New("ERR Failed loading engine name")
	}
	hasDesc, ok := r.Length()
	if !ok {
		return "", errors.New("ERR Failed loading library description indicator")
	}
	if hasDesc != 0 {
		if _, ok := r.String(); !ok {
			return "", errors.New("ERR Failed loading library description")
		}
	}
	blob, ok := r.String()
	if !ok {
		return "", errors.New("ERR Failed loading library blob")
	}
	return "#!" + string(eng) + " name=" + string(name) + "\n" + string(blob), nil
}
