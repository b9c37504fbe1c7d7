package engine

import (
	"errors"
	"fmt"
)

// Type identifies a value's type. The numbers are persisted: never reuse or
// renumber one.
type Type uint8

// Value types. The native families declare theirs in their own files
// (TypeDelay = 7 in delay.go) and name them with registerType.
const (
	TypeString Type = 1
	TypeList   Type = 2
	TypeSet    Type = 3
	TypeZSet   Type = 4
	TypeHash   Type = 5
	TypeUV     Type = 6 // unique counter (uv.go)
)

var typeNames = map[Type]string{
	TypeString: "string",
	TypeList:   "list",
	TypeSet:    "set",
	TypeZSet:   "zset",
	TypeHash:   "hash",
	TypeUV:     "uv",
}

// registerType names a native family's value type (TYPE, SCAN TYPE) and
// gives the decoder of its value record. Call it from an init function.
// Type numbers are persisted: it refuses a number or a name taken twice,
// so two families cannot collide unnoticed.
func registerType(t Type, name string, decode func(payload []byte) (Object, error)) {
	for other, n := range typeNames {
		if other == t || n == name {
			panic(fmt.Sprintf("engine: type %d %q registered twice", t, name))
		}
	}
	typeNames[t] = name
	registerDecoder(t, decode)
}

// String is the name TYPE reports.
func (t Type) String() string {
	if n, ok := typeNames[t]; ok {
		return n
	}
	return "none"
}

// TypeByName resolves a TYPE name (SCAN ... TYPE) case-insensitively.
func TypeByName(name string) (Type, bool) {
	for t, n := range typeNames {
		if equalFold(n, name) {
			return t, true
		}
	}
	return 0, false
}

// Object is a value stored under a key. Each type lives in its own file and
// knows how to copy itself, estimate its size and write itself out as change
// records.
type Object interface {
	Type() Type
	// Encoding is the name OBJECT ENCODING reports, chosen as Redis 7.0
	// would choose it for the same contents.
	Encoding() string
	// Clone returns an independent deep copy (COPY).
	Clone() Object
	// MemoryUsage estimates the bytes the value occupies (MEMORY USAGE).
	MemoryUsage() int
	// persist writes the whole value as change records; hasItems reports
	// whether it wrote sub-records a later delete must remove.
	persist(sink ChangeSink, db int, key []byte)
	hasItems() bool
	header() *objHeader
}

// objHeader is embedded in every object: the last access time in seconds
// (OBJECT IDLETIME), kept per value as Redis keeps its LRU clock per object.
type objHeader struct {
	atime uint32
}

func (h *objHeader) header() *objHeader { return h }

// Errors shared by commands; their texts are Redis's.
var (
	ErrWrongType = errors.New("WRONGTYPE Operation against a key holding the wrong kind of value")
	ErrNotInt    = errors.New("ERR value is not an integer or out of range")
	ErrNotFloat  = errors.New("ERR value is not a valid float")
	ErrOverflow  = errors.New("ERR increment or decrement would overflow")
	ErrNoSuchKey = errors.New("ERR no such key")
	ErrSyntax    = errors.New("ERR syntax error")
)

func equalFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		if lowerASCII(a[i]) != lowerASCII(b[i]) {
			return false
		}
	}
	return true
}

func lowerASCII(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// RefCount is what OBJECT REFCOUNT reports for obj.
func RefCount(obj Object) int64 {
	if s, ok := obj.(*String); ok {
		return s.refCount()
	}
	return 1
}
