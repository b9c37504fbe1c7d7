package tests

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// lolwutShape is what random art keeps from one call to the next: the
// lines' widths in cells and the footer.
func lolwutShape(t *testing.T, art string, cell string) string {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(art, "\n"), "\n")
	var shape []string
	for _, l := range lines {
		switch {
		case strings.Contains(l, "Redis ver.") || strings.HasPrefix(l, "Dedicated"):
			shape = append(shape, l)
		case cell != "":
			shape = append(shape, strings.Repeat("#", strings.Count(l, cell)))
		default:
			shape = append(shape, strings.Repeat("#", utf8.RuneCountInString(l)))
		}
	}
	return strings.Join(shape, "\n")
}

// TestLolwutRandomArtShape: Schotter from its third row of squares on and
// the whole skyline are random on both servers; their canvases have the
// same size, their cells are of the same kind and the footers are equal.
func TestLolwutRandomArtShape(t *testing.T) {
	redisAddr := realRedis(t)
	srv := startServer(t)
	red, rev := dialRaw(t, redisAddr), dialRaw(t, srv.Addr())
	for _, tc := range []struct {
		args []string
		cell string
	}{
		{[]string{"LOLWUT", "VERSION", "5"}, ""},
		{[]string{"LOLWUT", "VERSION", "5", "30", "4", "9"}, ""},
		{[]string{"LOLWUT", "VERSION", "6"}, "\033[0m"},
		{[]string{"LOLWUT", "VERSION", "6", "7", "33"}, "\033[0m"},
	} {
		want, got := red.do(tc.args...).Str, rev.do(tc.args...).Str
		if w, g := lolwutShape(t, want, tc.cell), lolwutShape(t, got, tc.cell); w != g {
			t.Errorf("%v: shape\n%s\nwant\n%s", tc.args, g, w)
		}
		// Every cell is a braille pattern, or one of the four gray levels.
		for _, r := range strings.Split(got, "\n") {
			if tc.cell != "" && strings.Contains(r, tc.cell) {
				for _, c := range strings.SplitAfter(r, tc.cell) {
					if c != "" && !strings.HasSuffix(c, " \033[0m") {
						t.Errorf("%v: bad cell %q", tc.args, c)
					}
				}
			}
			if tc.cell == "" && !strings.Contains(r, "Redis ver.") {
				for _, ch := range r {
					if ch < 0x2800 || ch > 0x28ff {
						t.Fatalf("%v: %q is not braille", tc.args, ch)
					}
				}
			}
		}
		// Redis's art changes between calls; so does ours (at the default
		// sizes, where hundreds of random draws make a repeat impossible).
		if len(tc.args) > 3 {
			continue
		}
		if again := rev.do(tc.args...).Str; again == got {
			t.Errorf("%v: the same art twice", tc.args)
		}
	}
}
