// Package progress shows long work (a report's rounds, the gate, rate
// steps, a knee search) as one line rewritten in place when the tool
// writes to a terminal: what it is doing, how long it has run and about
// how long is left. Written anywhere else (CI, a file, a pipe), the tool's
// progress lines pass through as they are, one per line, as before.
package progress

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// Ownership: a Line's fields are guarded by mu; the tool writes progress
// lines (Write) and lines that stay (Permanent) from any goroutine.

// Line is a tool's progress output.
type Line struct {
	mu      sync.Mutex
	w       io.Writer
	tty     bool
	width   int // the terminal's columns: a longer line would wrap and \r could not rewrite it
	start   time.Time
	total   time.Duration // the work's expected length (0: unknown)
	atMost  bool          // total is an upper bound (a search that may stop early)
	status  string        // the last progress line (terminal only)
	partial []byte        // a progress line not yet ended by '\n'
	now     func() time.Time
}

// For is the progress output for w: rewritten in place when w is a
// terminal, plain lines otherwise.
func For(w io.Writer) *Line {
	f, ok := w.(*os.File)
	if !ok {
		return New(w, false, 0)
	}
	ws, err := unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ)
	if err != nil {
		return New(w, false, 0)
	}
	return New(w, true, int(ws.Col))
}

// New is a Line on w; tty says whether to rewrite it in place, width is
// the terminal's columns (0: 80).
func New(w io.Writer, tty bool, width int) *Line {
	if width <= 0 {
		width = 80
	}
	return &Line{w: w, tty: tty, width: width, start: time.Now(), now: time.Now}
}

// Terminal says whether the line is rewritten in place.
func (l *Line) Terminal() bool { return l.tty }

// Expect sets how long the work is expected to take in all, from when the
// Line was made; atMost says it is an upper bound.
func (l *Line) Expect(total time.Duration, atMost bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.total, l.atMost = total, atMost
}

// ExpectLeft revises the estimate as the work goes: about left from now
// (at most, with atMost); left <= 0 says it is not known any more. A
// library that learns its plan as it goes (the gate's rounds) calls it
// through a small interface of its own, so it needs no import of this
// package.
func (l *Line) ExpectLeft(left time.Duration, atMost bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.total, l.atMost = 0, false
	if left > 0 {
		l.total, l.atMost = l.now().Sub(l.start)+left, atMost
	}
}

// Write takes progress lines: on a terminal each one replaces the last,
// with the time run and left beside it; elsewhere they pass through.
func (l *Line) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.tty {
		return l.w.Write(p)
	}
	l.partial = append(l.partial, p...)
	for {
		i := bytes.IndexByte(l.partial, '\n')
		if i < 0 {
			break
		}
		if line := strings.TrimSpace(string(l.partial[:i])); line != "" {
			l.status = line
		}
		l.partial = l.partial[i+1:]
	}
	l.partial = append([]byte(nil), l.partial...)
	return len(p), l.draw()
}

// Permanent is a writer for lines that stay (a table's rows, a verdict):
// on a terminal the progress line is cleared before them, and the next
// progress line draws it again (a redraw after them would show a stale
// line under a table printed at the end).
func (l *Line) Permanent() io.Writer { return permanent{l} }

type permanent struct{ l *Line }

func (p permanent) Write(b []byte) (int, error) {
	l := p.l
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.tty {
		return l.w.Write(b)
	}
	if l.status != "" {
		if _, err := io.WriteString(l.w, "\r\x1b[K"); err != nil {
			return 0, err
		}
		l.status = ""
	}
	return l.w.Write(b)
}

// Done clears the progress line (a terminal's cursor is left at the start
// of an empty line for what the tool prints next).
func (l *Line) Done() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.tty && l.status != "" {
		_, _ = io.WriteString(l.w, "\r\x1b[K")
		l.status = ""
	}
}

// draw rewrites the progress line (mu held).
func (l *Line) draw() error {
	if l.status == "" {
		return nil
	}
	_, err := io.WriteString(l.w, "\r\x1b[K"+fit(l.status+"  "+l.clock(), l.width-1))
	return err
}

// clock is the time run and, when the work's length is known, about how
// long is left.
func (l *Line) clock() string {
	ran := l.now().Sub(l.start)
	s := "[" + Round(ran) + " run"
	switch left := l.total - ran; {
	case l.total <= 0:
	case left <= 0:
		s += ", past the estimate"
	case l.atMost:
		s += ", at most " + Round(left) + " left"
	default:
		s += ", about " + Round(left) + " left"
	}
	return s + "]"
}

// fit cuts s to n runes, marking the cut.
func fit(s string, n int) string {
	r := []rune(s)
	if len(r) <= n || n < 2 {
		return s
	}
	return string(r[:n-1]) + "…"
}

// Round writes d to the second (to the minute past an hour): 45s, 3m05s, 1h20m.
func Round(d time.Duration) string {
	d = d.Round(time.Second)
	switch {
	case d >= time.Hour:
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	case d >= time.Minute:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%ds", int(d.Seconds()))
}
