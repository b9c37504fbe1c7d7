package persistence

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/revolver-db/revolver/engine"
)

// viewLines reads a view's keyspace records as load's lines.
func viewLines(t *testing.T, v *Checkpoint) []string {
	t.Helper()
	var l fakeLoader
	if _, err := v.LoadKeys(1<<20, func() (engine.Loader, error) { return &l, nil }, func() error { return nil }); err != nil {
		t.Fatal(err)
	}
	slices.Sort(l.lines)
	return l.lines
}

// viewModel is the keyspace a run of changes leaves, as sorted load lines.
type viewModel struct {
	values map[string][]byte
	items  map[string]map[string][]byte
}

func (m *viewModel) lines() []string {
	var out []string
	for k, v := range m.values {
		out = append(out, fmt.Sprintf("value 0 %q 1 %q", k, v))
	}
	for k, its := range m.items {
		for i, v := range its {
			out = append(out, fmt.Sprintf("item 0 %q %q %q", k, i, v))
		}
	}
	slices.Sort(out)
	return out
}

// A view holds every change made before it was asked for and none made
// after, wherever the point falls: inside a batch still open, between
// batches, while the applier is behind, with large values held back by
// the applier and patched. Each round writes, asks for a view, writes on,
// then compares the view with a model of the changes before the point.
func TestViewHoldsExactlyThePoint(t *testing.T) {
	for _, tc := range []struct {
		name string
		tn   tuning
	}{
		{"default", tuning{}},
		{"holds-small-values", tuning{holdMin: 64}},
		{"slow-applier", tuning{applyHook: func() { time.Sleep(50 * time.Microsecond) }}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := openTunedTest(t, t.TempDir(), FsyncNo, tc.tn)
			defer s.Close()
			m := viewModel{values: map[string][]byte{}, items: map[string]map[string][]byte{}}
			rng := rand.New(rand.NewPCG(1, uint64(len(tc.name))))
			change := func() {
				key := fmt.Appendf(nil, "k%d", rng.IntN(40))
				val := bytes.Repeat([]byte{byte('a' + rng.IntN(26))}, 4+rng.IntN(300))
				val[0] = byte('A' + rng.IntN(26))
				switch op := rng.IntN(10); {
				case op < 5:
					s.PutValue(0, key, 1, val)
					{
						m.values[string(key)] = val
					}
				case op < 7 && m.values[string(key)] != nil:
					off := rng.IntN(8)
					s.PatchValue(0, key, off, val[:4])
					{
						v := m.values[string(key)]
						if len(v) < off+4 {
							v = append(v, make([]byte, off+4-len(v))...)
						}
						copy(v[off:], val[:4])
						m.values[string(key)] = v
					}
				case op < 8:
					s.PutItem(0, key, val[:3], val)
					{
						if m.items[string(key)] == nil {
							m.items[string(key)] = map[string][]byte{}
						}
						m.items[string(key)][string(val[:3])] = val
					}
				default:
					s.DeleteKey(0, key, true)
					{
						delete(m.values, string(key))
						delete(m.items, string(key))
					}
				}
			}
			for round := range 30 {
				for range rng.IntN(200) {
					change()
				}
				if round%3 == 0 {
					wait(s) // the point falls between batches
				}
				want := m.lines()
				got := make(chan *Checkpoint, 1)
				if err := s.ViewThen(func(v *Checkpoint, err error) {
					if err != nil {
						t.Error(err)
					}
					got <- v
				}); err != nil {
					t.Fatal(err)
				}
				for range rng.IntN(200) {
					change()
				}
				v := <-got
				if v == nil {
					t.FailNow()
				}
				have := viewLines(t, v)
				if err := v.Close(); err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(have, want) {
					t.Fatalf("round %d: the view differs from the store as of its point\n got: %q\nwant: %q", round, have, want)
				}
			}
		})
	}
}

// A view still asked for when the store closes is answered with an error.
func TestViewAnsweredOnClose(t *testing.T) {
	s := openTunedTest(t, t.TempDir(), FsyncNo, tuning{applyHook: func() { time.Sleep(time.Millisecond) }})
	for i := range 100 {
		s.PutValue(0, fmt.Appendf(nil, "k%d", i), 1, []byte("v"))
	}
	answered := make(chan error, 1)
	if err := s.ViewThen(func(v *Checkpoint, err error) {
		if v != nil {
			v.Close()
		}
		answered <- err
	}); err != nil {
		t.Fatal(err)
	}
	crash(t, s)
	select {
	case <-answered:
	case <-time.After(10 * time.Second):
		t.Fatal("a view asked for before Close was never answered")
	}
	if err := s.ViewThen(func(*Checkpoint, error) {}); err == nil {
		t.Fatal("ViewThen on a closed store succeeded")
	}
}
