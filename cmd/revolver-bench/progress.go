package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
)

// Progress keeps one status line on stderr up to date while long runs go
// on. It writes nothing unless stderr is a terminal, so logs and pipes stay
// clean.
type Progress struct {
	mu     sync.Mutex
	w      io.Writer
	label  string
	start  time.Time
	total  time.Duration
	shown  bool
	ticker *time.Ticker
	quit   chan struct{}
}

// NewProgress returns a progress line on w, or a silent one when w is not
// a terminal (or nil).
func NewProgress(w io.Writer) *Progress {
	p := &Progress{}
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			p.w = f
			p.ticker = time.NewTicker(250 * time.Millisecond)
			p.quit = make(chan struct{})
			go p.loop()
		}
	}
	return p
}

func (p *Progress) loop() {
	for {
		select {
		case <-p.ticker.C:
			p.mu.Lock()
			p.draw()
			p.mu.Unlock()
		case <-p.quit:
			return
		}
	}
}

func (p *Progress) draw() {
	if p.w == nil || p.label == "" {
		return
	}
	el := time.Since(p.start)
	line := fmt.Sprintf("%s  %.0fs", p.label, el.Seconds())
	if p.total > 0 {
		frac := min(1, el.Seconds()/p.total.Seconds())
		bar := int(frac * 20)
		prec := 0
		if p.total < 10*time.Second {
			prec = 1
		}
		line = fmt.Sprintf("%s  [%s%s] %.*f/%.*fs", p.label, strings.Repeat("#", bar),
			strings.Repeat(".", 20-bar), prec, el.Seconds(), prec, p.total.Seconds())
	}
	fmt.Fprintf(p.w, "\r\033[K%s", line)
	p.shown = true
}

// Timed shows label with a bar that fills over total.
func (p *Progress) Timed(label string, total time.Duration) {
	if p == nil || p.w == nil {
		return
	}
	p.mu.Lock()
	p.label, p.start, p.total = label, time.Now(), total
	p.mu.Unlock()
}

// Status shows label with the time since it was set.
func (p *Progress) Status(label string) { p.Timed(label, 0) }

// Clear erases the line.
func (p *Progress) Clear() {
	if p == nil || p.w == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.label = ""
	if p.shown {
		fmt.Fprint(p.w, "\r\033[K")
		p.shown = false
	}
}

// Close stops the ticker and erases the line.
func (p *Progress) Close() {
	if p == nil || p.w == nil {
		return
	}
	p.Clear()
	p.ticker.Stop()
	close(p.quit)
}
