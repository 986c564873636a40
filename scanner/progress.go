package scanner

import (
	"fmt"
	"io"
	"sync"
	"time"
)

// progress prints "scanned N/M resources (R/s)" to a terminal, in place,
// every interval, and a last line when the scan ends. A nil writer prints
// nothing.
type progress struct {
	w        io.Writer
	start    time.Time
	mu       sync.Mutex
	n, total int
	stopC    chan struct{}
	doneC    chan struct{}
	once     sync.Once
}

func newProgress(w io.Writer, interval time.Duration) *progress {
	p := &progress{w: w, start: time.Now()}
	if w == nil {
		return p
	}
	p.stopC, p.doneC = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(p.doneC)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				p.print("\r")
			case <-p.stopC:
				return
			}
		}
	}()
	return p
}

func (p *progress) expect(n int) {
	p.mu.Lock()
	p.total += n
	p.mu.Unlock()
}

func (p *progress) done(n int) {
	p.mu.Lock()
	p.n += n
	p.mu.Unlock()
}

// line is the progress text.
func (p *progress) line() string {
	p.mu.Lock()
	n, total := p.n, p.total
	p.mu.Unlock()
	elapsed := time.Since(p.start)
	rate := 0.0
	if s := elapsed.Seconds(); s > 0 {
		rate = float64(n) / s
	}
	if total < n {
		total = n
	}
	return fmt.Sprintf("scanned %d/%d resources (%.0f/s, %s)", n, total, rate, elapsed.Round(100*time.Millisecond))
}

func (p *progress) print(prefix string) {
	// Erase what a longer previous line left.
	fmt.Fprintf(p.w, "%s%s\x1b[K", prefix, p.line())
}

// stop ends the ticker; safe to call more than once.
func (p *progress) stop() {
	if p.w == nil {
		return
	}
	p.once.Do(func() {
		close(p.stopC)
		<-p.doneC
	})
}

// finish prints the last line, ended by a newline.
func (p *progress) finish() {
	if p.w == nil {
		return
	}
	p.stop()
	fmt.Fprintf(p.w, "\r%s\x1b[K\n", p.line())
}
