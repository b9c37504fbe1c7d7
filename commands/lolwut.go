package commands

import (
	"math"
	"math/rand/v2"
	"strings"

	"github.com/revolver-db/revolver/engine"
)

// LOLWUT draws Redis's computer art. Redis 7.0 has no art of its own: the
// default answer is the version line; VERSION 5 draws Georg Nees's
// Schotter in braille, VERSION 6 a skyline in gray levels. Both art pieces
// draw from a randomly seeded generator, so, as on redis-server, only their
// shape (canvas size, the squares of the first two rows) is the same from
// one call to the next.
var Lolwut = []*Command{
	{Name: "lolwut", Arity: -1, Flags: "readonly fast", Group: "server", Since: "5.0.0",
		Summary: "Display some computer art and the Redis version", Args: "[VERSION version:integer]", Run: lolwut},
}

func lolwut(c *Ctx) {
	args := c.Args[1:]
	major := uint32(7) // the major of Version: no art
	if len(c.Args) >= 3 && is(c.Args[1], "VERSION") {
		v, ok := c.Int64(2)
		if !ok {
			return
		}
		// Redis prints the version as an unsigned int and dispatches on
		// its first digits: 5 and 6 have art, everything else does not.
		major = uint32(v)
		args = c.Args[3:]
	}
	switch {
	case major == 5:
		lolwutSchotter(c, args)
	case major == 6:
		lolwutSkyline(c, args)
	default:
		c.W.Verbatim("txt", "Redis ver. "+Version+"\n")
	}
}

// lolwutArgs parses LOLWUT's optional numbers into dst (defaults kept),
// then clamps each to [1, max].
func lolwutArgs(c *Ctx, args [][]byte, limits []int64, dst ...*int64) bool {
	for i, d := range dst {
		if i < len(args) {
			n, ok := parseIntReply(c, args[i])
			if !ok {
				return false
			}
			*d = n
		}
		*d = min(max(*d, 1), limits[i])
	}
	return true
}

func parseIntReply(c *Ctx, b []byte) (int64, bool) {
	n, ok := engine.ParseInt(b)
	if !ok {
		c.W.Error("ERR value is not an integer or out of range")
	}
	return n, ok
}

// lwCanvas is a grid of small color numbers.
type lwCanvas struct {
	width, height int
	pixels        []byte
}

func newCanvas(w, h int, bg byte) *lwCanvas {
	cv := &lwCanvas{width: w, height: h, pixels: make([]byte, w*h)}
	for i := range cv.pixels {
		cv.pixels[i] = bg
	}
	return cv
}

func (cv *lwCanvas) set(x, y int, color byte) {
	if x >= 0 && x < cv.width && y >= 0 && y < cv.height {
		cv.pixels[x+y*cv.width] = color
	}
}

func (cv *lwCanvas) get(x, y int) byte {
	if x >= 0 && x < cv.width && y >= 0 && y < cv.height {
		return cv.pixels[x+y*cv.width]
	}
	return 0
}

// line draws with Bresenham's algorithm.
func (cv *lwCanvas) line(x1, y1, x2, y2 int, color byte) {
	dx, dy := abs(x2-x1), abs(y2-y1)
	sx, sy := -1, -1
	if x1 < x2 {
		sx = 1
	}
	if y1 < y2 {
		sy = 1
	}
	e := dx - dy
	for {
		cv.set(x1, y1, color)
		if x1 == x2 && y1 == y2 {
			return
		}
		e2 := e * 2
		if e2 > -dy {
			e -= dy
			x1 += sx
		}
		if e2 < dx {
			e += dx
			y1 += sy
		}
	}
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// square draws a square of side size centered on (x, y), turned by angle.
// The arithmetic is in float32 where Redis's is, so that the same inputs
// give the same pixels.
func (cv *lwCanvas) square(x, y int, size, angle float32, color byte) {
	size = float32(float64(size) / 1.4142135623)
	size = float32(math.Round(float64(size)))
	var px, py [4]int
	k := float32(math.Pi/4 + float64(angle))
	for j := 0; j < 4; j++ {
		px[j] = int(math.Round(float64(math.Sin(float64(k))*float64(size)) + float64(x)))
		py[j] = int(math.Round(float64(math.Cos(float64(k))*float64(size)) + float64(y)))
		k = float32(float64(k) + math.Pi/2)
	}
	for j := 0; j < 4; j++ {
		cv.line(px[j], py[j], px[(j+1)%4], py[(j+1)%4], color)
	}
}

// cRand stands for C's rand(): a non-negative 31-bit number.
func cRand() int64 { return int64(rand.Int32()) }

const cRandMax = float32(math.MaxInt32)

func lolwutSchotter(c *Ctx, args [][]byte) {
	cols, perRow, perCol := int64(66), int64(8), int64(12)
	if !lolwutArgs(c, args, []int64{1000, 200, 200}, &cols, &perRow, &perCol) {
		return
	}
	cv := drawSchotter(int(cols), int(perRow), int(perCol))
	var b strings.Builder
	for y := 0; y < cv.height; y += 4 {
		for x := 0; x < cv.width; x += 2 {
			// A braille cell is 2x4 dots: bits 0-2 and 6 down the left
			// column, 3-5 and 7 down the right.
			bits := 0
			for i, d := range [8][2]int{{0, 0}, {0, 1}, {0, 2}, {1, 0}, {1, 1}, {1, 2}, {0, 3}, {1, 3}} {
				if cv.get(x+d[0], y+d[1]) != 0 {
					bits |= 1 << i
				}
			}
			b.WriteRune(rune(0x2800 + bits))
		}
		if y != cv.height-1 {
			b.WriteByte('\n')
		}
	}
	b.WriteString("\nGeorg Nees - schotter, plotter on paper, 1968. Redis ver. " + Version + "\n")
	c.W.Verbatim("txt", b.String())
}

// drawSchotter lays perRow x perCol squares on a canvas two dots per
// console column wide; from the third row on, each square is turned and
// shifted at random, more so further down.
func drawSchotter(cols, perRow, perCol int) *lwCanvas {
	width := cols * 2
	padding := 0
	if width > 4 {
		padding = 2
	}
	side := float32(width-padding*2) / float32(perRow)
	// float32 as in Redis; each conversion rounds, so no step is fused.
	height := int(float32(side*float32(perCol)) + float32(padding*2))
	cv := newCanvas(width, height, 0)
	for y := 0; y < perCol; y++ {
		for x := 0; x < perRow; x++ {
			sx := int(float32(float32(x)*side) + side/2 + float32(padding))
			sy := int(float32(float32(y)*side) + side/2 + float32(padding))
			var angle float32
			if y > 1 {
				r := [3]float32{}
				for i := range r {
					r[i] = float32(cRand()) / cRandMax / float32(perCol) * float32(y)
				}
				for i := range r {
					if cRand()%2 == 1 {
						r[i] = -r[i]
					}
				}
				angle = r[0]
				sx = int(float32(sx) + float32(r[1]*side)/3)
				sy = int(float32(sy) + float32(r[2]*side)/3)
			}
			cv.square(sx, sy, side, angle, 1)
		}
	}
	return cv
}

var skylineColors = [4]string{"0;30;40m", "0;90;100m", "0;37;47m", "0;97;107m"}

func lolwutSkyline(c *Ctx, args [][]byte) {
	cols, rows := int64(80), int64(20)
	if !lolwutArgs(c, args, []int64{1000, 1000}, &cols, &rows) {
		return
	}
	cv := newCanvas(int(cols), int(rows), 3)
	drawSkyline(cv)
	var b strings.Builder
	for y := 0; y < cv.height; y++ {
		for x := 0; x < cv.width; x++ {
			b.WriteString("\033[" + skylineColors[cv.get(x, y)&3] + " \033[0m")
		}
		if y != cv.height-1 {
			b.WriteByte('\n')
		}
	}
	b.WriteString("\nDedicated to the 8 bit game developers of past and present.\n" +
		"Original 8 bit image from Plaguemon by hikikomori. Redis ver. " + Version + "\n")
	c.W.Verbatim("txt", b.String())
}

type skyscraper struct {
	xoff, width, height int
	windows             bool
	color               byte
}

// drawSkyline draws two rows of plain background towers, the lighter
// behind, then a row of black towers with lit windows.
func drawSkyline(cv *lwCanvas) {
	for color := byte(2); color >= 1; color-- {
		for off := -10; off < cv.width; {
			off += int(cRand() % 8)
			s := skyscraper{xoff: off, width: 10 + int(cRand()%9), color: color}
			if color == 2 {
				s.height = cv.height/2 + int(cRand()%int64(cv.height))/2
			} else {
				s.height = cv.height/2 + int(cRand()%int64(cv.height))/3
			}
			s.draw(cv)
			if color == 2 {
				off += s.width / 2
			} else {
				off += s.width + 1
			}
		}
	}
	for off := -10; off < cv.width; {
		off += int(cRand() % 8)
		s := skyscraper{xoff: off, width: 5 + int(cRand()%14), windows: true}
		if s.width%4 != 0 {
			s.width += s.width % 3
		}
		s.height = cv.height/3 + int(cRand()%int64(cv.height))/2
		s.draw(cv)
		off += s.width + 5
	}
}

func (s skyscraper) draw(cv *lwCanvas) {
	bottom := cv.height - 1
	top := bottom - s.height + 1
	for y := bottom; y >= top; y-- {
		for x := s.xoff; x < s.xoff+s.width; x++ {
			if y == top && (x <= s.xoff+1 || x >= s.xoff+s.width-2) {
				continue // the roof is narrower by two on each side
			}
			color := s.color
			if s.windows && x > s.xoff+1 && x < s.xoff+s.width-2 && y > top+1 && y < bottom-1 {
				relx, rely := x-(s.xoff+1), y-(top+1)
				// Windows are two pixels wide and one tall (terminal
				// cells are taller than wide), in one of the two grays.
				if relx/2%2 != 0 && rely%2 != 0 {
					for color == s.color {
						color = byte(1 + cRand()%2)
					}
					if relx%2 != 0 {
						color = cv.get(x-1, y)
					}
				}
			}
			cv.set(x, y, color)
		}
	}
}
