// Package progress is the line that shows, on a terminal, how far a long
// apply is (the operations run, the items they touched out of the
// intent's, the time taken), rewritten in place and cleared at the end.
// The caller decides whether there is a terminal; Op may be called from
// any goroutine.
package progress

import (
	"fmt"
	"io"
	"sync"
	"time"

	dg "github.com/netagent/netagent/depgraph"
)

// After is how long an apply runs before it shows its progress.
const After = time.Second

// Line shows, on a terminal (cmd/netagent's stderr), how far a long apply
// is: the operations run and the items they touched out of the intent's,
// the time it has taken. Nothing for an apply shorter than After.
type Line struct {
	w     io.Writer
	total int
	start time.Time
	mu    sync.Mutex
	ops   int
	items map[dg.ItemRef]struct{}
	shown bool
	last  time.Time
}

// New is the progress of an apply of total items, on w, from now.
func New(w io.Writer, total int) *Line {
	return &Line{w: w, total: total, start: time.Now(), items: map[dg.ItemRef]struct{}{}}
}

// Op counts an operation finished on the item ref.
func (p *Line) Op(ref dg.ItemRef) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.ops++
	p.items[ref] = struct{}{}
	now := time.Now()
	if now.Sub(p.start) < After || now.Sub(p.last) < 100*time.Millisecond {
		return
	}
	p.last, p.shown = now, true
	fmt.Fprintf(p.w, "\r%s\033[K", p.line(now))
}

// line is the progress: "apply: 1234 operations, 1200/5000 items, 3s".
func (p *Line) line(now time.Time) string {
	return fmt.Sprintf("apply: %d operations, %d/%d items, %s", p.ops, min(len(p.items), p.total), p.total,
		now.Sub(p.start).Round(100*time.Millisecond))
}

// End clears the progress line, if one was shown.
func (p *Line) End() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.shown {
		fmt.Fprint(p.w, "\r\033[K")
	}
}
