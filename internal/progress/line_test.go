package progress

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"weaseldb/internal/testenv"
)

// clockAt makes l's clock read start+d.
func clockAt(l *Line, d time.Duration) { l.now = func() time.Time { return l.start.Add(d) } }

func TestLineOnATerminal(t *testing.T) {
	cases := []struct {
		name   string
		total  time.Duration
		atMost bool
		ran    time.Duration
		want   string
	}{
		{"unknown length", 0, false, 5 * time.Second, "step 1  [5s run]"},
		{"about", 2 * time.Minute, false, 50 * time.Second, "step 1  [50s run, about 1m10s left]"},
		{"at most", time.Hour, true, 90 * time.Second, "step 1  [1m30s run, at most 58m30s left]"},
		{"overrun", time.Second, false, 2 * time.Second, "step 1  [2s run, past the estimate]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var buf bytes.Buffer
			l := New(&buf, true, 100)
			l.Expect(c.total, c.atMost)
			clockAt(l, c.ran)
			fmt.Fprint(l, "step 1\n")
			if got := buf.String(); got != "\r\x1b[K"+c.want {
				t.Errorf("got %q, want %q", got, "\r\x1b[K"+c.want)
			}
		})
	}
}

// ExpectLeft counts from the time it is told; 0 makes the length unknown.
func TestExpectLeft(t *testing.T) {
	cases := []struct {
		name   string
		left   time.Duration
		atMost bool
		want   string
	}{
		{"about", 30 * time.Second, false, "step  [1m10s run, about 20s left]"},
		{"at most", 30 * time.Second, true, "step  [1m10s run, at most 20s left]"},
		{"not known", 0, false, "step  [1m10s run]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var buf bytes.Buffer
			l := New(&buf, true, 100)
			l.Expect(time.Hour, false)
			clockAt(l, time.Minute)
			l.ExpectLeft(c.left, c.atMost)
			clockAt(l, 70*time.Second)
			fmt.Fprint(l, "step\n")
			if got := buf.String(); got != "\r\x1b[K"+c.want {
				t.Errorf("got %q, want %q", got, "\r\x1b[K"+c.want)
			}
		})
	}
}

// A line that stays clears the progress line, then draws it again; a line
// longer than the terminal is cut, never wrapped.
func TestPermanentLinesAndWidth(t *testing.T) {
	var buf bytes.Buffer
	l := New(&buf, true, 20)
	clockAt(l, 0)
	fmt.Fprint(l, "a progress line well past twenty columns\n")
	if got := buf.String(); got != "\r\x1b[Ka progress line we…" {
		t.Errorf("cut line %q", got)
	}
	buf.Reset()
	fmt.Fprint(l.Permanent(), "row\n")
	if got := buf.String(); got != "\r\x1b[Krow\n" {
		t.Errorf("permanent %q, want the line cleared, then the row", got)
	}
	buf.Reset()
	fmt.Fprint(l.Permanent(), "row 2\n")
	if got := buf.String(); got != "row 2\n" {
		t.Errorf("a second row %q, want it alone (nothing to clear)", got)
	}
	fmt.Fprint(l, "next\n")
	buf.Reset()
	l.Done()
	if buf.String() != "\r\x1b[K" {
		t.Errorf("Done wrote %q", buf.String())
	}
}

// Not a terminal: every byte passes through, in order.
func TestLineElsewhereIsPlain(t *testing.T) {
	var buf bytes.Buffer
	l := For(&buf)
	if l.Terminal() {
		t.Fatal("a buffer taken for a terminal")
	}
	fmt.Fprint(l, "one\n")
	fmt.Fprint(l.Permanent(), "row\n")
	fmt.Fprint(l, "two\n")
	l.Done()
	if buf.String() != "one\nrow\ntwo\n" {
		t.Errorf("got %q", buf.String())
	}
}

// For a real terminal (a pty), For finds it and its width.
func TestForFindsATerminal(t *testing.T) {
	control, term, err := testenv.OpenPTY(57)
	if err != nil {
		t.Skipf("no pty here: %v", err)
	}
	defer control.Close()
	defer term.Close()
	l := For(term)
	if !l.Terminal() || l.width != 57 {
		t.Fatalf("terminal %v width %d, want a terminal of 57 columns", l.Terminal(), l.width)
	}
	go func() { fmt.Fprint(l, "hello\n"); term.Close() }()
	out, _ := io.ReadAll(control)
	if !strings.Contains(string(out), "\x1b[Khello  [") {
		t.Errorf("the terminal got %q", out)
	}
}

func TestRound(t *testing.T) {
	for d, want := range map[time.Duration]string{0: "0s", 1499 * time.Millisecond: "1s", 61 * time.Second: "1m01s", 3725 * time.Second: "1h02m"} {
		if got := Round(d); got != want {
			t.Errorf("Round(%v) = %q, want %q", d, got, want)
		}
	}
}
