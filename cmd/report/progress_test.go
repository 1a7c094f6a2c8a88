package main

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"time"

	"weaseldb/internal/testenv"
)

// report progress shows a step's lines as one line rewritten in place on a
// terminal (the last of the lines read at once), with about how long is
// left, and passes them through as they are anywhere else.
func TestFollow(t *testing.T) {
	const in = "round 1/2: seed\nround 2/2: fitted\n"
	cases := []struct {
		name  string
		tty   bool
		total time.Duration
		want  []string // in the output
		not   []string
	}{
		{"piped", false, time.Minute, []string{in}, []string{"\r", "\x1b["}},
		{"terminal", true, time.Hour, []string{"\r\x1b[Kround 2/2: fitted  [", " run, about ", " left]"}, nil},
		{"terminal, no estimate", true, 0, []string{"\r\x1b[Kround 2/2: fitted  [", " run]"}, []string{"left"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got string
			if c.tty {
				got = followOnPTY(t, in, c.total)
			} else {
				var out bytes.Buffer
				if err := follow(strings.NewReader(in), &out, c.total); err != nil {
					t.Fatal(err)
				}
				got = out.String()
			}
			for _, w := range c.want {
				if !strings.Contains(got, w) {
					t.Errorf("output lacks %q:\n%q", w, got)
				}
			}
			for _, n := range c.not {
				if strings.Contains(got, n) {
					t.Errorf("output has %q:\n%q", n, got)
				}
			}
		})
	}
}

// followOnPTY runs follow with a pty as its output and returns what the
// terminal received.
func followOnPTY(t *testing.T, in string, total time.Duration) string {
	t.Helper()
	control, term, err := testenv.OpenPTY(200)
	if err != nil {
		t.Skipf("no pty here: %v", err)
	}
	defer control.Close()
	read := make(chan string, 1)
	go func() {
		var b bytes.Buffer
		_, _ = io.Copy(&b, control) // ends (EIO) once the terminal is closed
		read <- b.String()
	}()
	err = follow(strings.NewReader(in), term, total)
	term.Close()
	if err != nil {
		t.Fatal(err)
	}
	return <-read
}

func TestFollowCmdBadTotal(t *testing.T) {
	var stderr bytes.Buffer
	err := followCmd([]string{"--total", "-1"}, strings.NewReader(""), io.Discard, &stderr)
	if err == nil || !strings.Contains(err.Error(), "--total -1") {
		t.Errorf("--total -1: %v", err)
	}
	if err := followCmd([]string{"extra"}, strings.NewReader(""), io.Discard, &stderr); err == nil {
		t.Error("an argument: no error")
	}
}
