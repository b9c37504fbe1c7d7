package persistence

import (
	"bytes"
	"math"
	"strings"
	"testing"
)

func TestRecordKeyRoundTrip(t *testing.T) {
	cases := []struct {
		db   int
		key  string
		kind byte
		item string
	}{
		{0, "", kindValue, ""},
		{0, "a", kindValue, ""},
		{15, "user:1", kindExpire, ""},
		{maxDB, "k\x00\x01\xff", kindItem, ""},
		{3, "list", kindItem, "\x00\x00\x00\x07"},
		{7, strings.Repeat("x", 70000), kindItem, "field"},
	}
	for _, c := range cases {
		k := appendRecordKey([]byte("junk"), c.db, []byte(c.key), c.kind, []byte(c.item))[4:]
		if len(k) != recordKeyLen([]byte(c.key), []byte(c.item)) {
			t.Fatalf("length %d, want %d", len(k), recordKeyLen([]byte(c.key), []byte(c.item)))
		}
		r, err := decodeRecordKey(k)
		if err != nil {
			t.Fatalf("decode %x: %v", k, err)
		}
		if r.DB != c.db || string(r.Key) != c.key || r.Kind != c.kind || string(r.Item) != c.item {
			t.Fatalf("round trip of %+v gave db=%d key=%q kind=%d item=%q", c, r.DB, r.Key, r.Kind, r.Item)
		}
	}
}

func TestRecordKeyOrder(t *testing.T) {
	key := []byte("k")
	v := appendRecordKey(nil, 1, key, kindValue, nil)
	e := appendRecordKey(nil, 1, key, kindExpire, nil)
	i := appendRecordKey(nil, 1, key, kindItem, []byte{0})
	end := appendRecordKey(nil, 1, key, kindEnd, nil)
	if !(bytes.Compare(v, e) < 0 && bytes.Compare(e, i) < 0 && bytes.Compare(i, end) < 0) {
		t.Fatal("records of a key must sort value < expire < items < end")
	}
	// A longer key sharing the bytes must fall outside the key's range.
	other := appendRecordKey(nil, 1, []byte("k\x00"), kindValue, nil)
	if bytes.Compare(other, v) >= 0 && bytes.Compare(other, end) < 0 {
		t.Fatal("another key's record falls inside the key's range")
	}
	for _, db := range []int{0, 1, 254, maxDB} {
		start, stop := make([]byte, dbStartLen), make([]byte, dbEndLen(db))
		putDBBounds(start, stop, db)
		in := appendRecordKey(nil, db, []byte("zzz"), kindItem, []byte("\xff\xff"))
		if bytes.Compare(in, start) < 0 || bytes.Compare(in, stop) >= 0 {
			t.Fatalf("db %d: record outside its bounds", db)
		}
		if db > 0 {
			prev := appendRecordKey(nil, db-1, []byte("\xff"), kindItem, []byte("\xff"))
			if bytes.Compare(prev, start) >= 0 {
				t.Fatalf("db %d: previous db's record inside bounds", db)
			}
		}
		if bytes.Compare(stop, []byte{keyspaceEnd}) > 0 {
			t.Fatalf("db %d: bounds past the keyspace", db)
		}
	}
}

func TestDecodeRecordKeyErrors(t *testing.T) {
	good := appendRecordKey(nil, 0, []byte("abc"), kindValue, nil)
	cases := map[string][]byte{
		"empty":          nil,
		"short":          good[:5],
		"wrong tag":      append([]byte{'x'}, good[1:]...),
		"length too big": {keyspaceTag, 0, 0xff, 0xff, 0xff, 0xff, 'a', kindValue},
		"no kind":        good[:len(good)-1],
		"unknown kind":   appendRecordKey(nil, 0, []byte("abc"), 9, nil),
		"value trailing": appendRecordKey(nil, 0, []byte("abc"), kindValue, []byte("x")),
		"expire trailer": appendRecordKey(nil, 0, []byte("abc"), kindExpire, []byte("x")),
	}
	for name, k := range cases {
		if _, err := decodeRecordKey(k); err == nil {
			t.Errorf("%s: %x decoded without error", name, k)
		}
	}
}

func TestValueCodec(t *testing.T) {
	if _, _, err := decodeValue(nil); err == nil {
		t.Fatal("empty value record decoded")
	}
	typ, payload, err := decodeValue([]byte{1, 'h', 'i'})
	if err != nil || typ != 1 || string(payload) != "hi" {
		t.Fatalf("got %d %q %v", typ, payload, err)
	}
	for _, at := range []int64{0, 1, -1, 1700000000000, math.MaxInt64, math.MinInt64} {
		b := make([]byte, 8)
		putExpire(b, at)
		got, err := decodeExpire(b)
		if err != nil || got != at {
			t.Fatalf("expire %d round trip gave %d, %v", at, got, err)
		}
	}
	if _, err := decodeExpire([]byte{1, 2, 3}); err == nil {
		t.Fatal("short expire record decoded")
	}
}

func TestFormatValue(t *testing.T) {
	if n, ok := parseFormat(formatValue(formatVersion)); !ok || n != formatVersion {
		t.Fatalf("parseFormat(formatValue) = %d, %v", n, ok)
	}
	if string(formatValue(1)) != "revolver-data 1" {
		t.Fatalf("format value %q", formatValue(1))
	}
	for _, bad := range []string{"", "revolver-data ", "revolver-data x", "other 1", "revolver-data 99999999999999999999"} {
		if _, ok := parseFormat([]byte(bad)); ok {
			t.Errorf("parseFormat(%q) accepted", bad)
		}
	}
}
