package main

import (
	"io"
	"time"

	"weaseldb/internal/progress"
)

// withProgress gives a long subcommand its outputs: on a terminal, the
// progress lines (stderr) become one line rewritten in place with the time
// run and, when total is known (> 0), about how long is left, and stdout's
// lines stay above it; elsewhere both are as given. done clears the line.
func withProgress(stdout, stderr io.Writer, total time.Duration) (out, log io.Writer, done func()) {
	line := progress.For(stderr)
	if !line.Terminal() {
		return stdout, stderr, func() {}
	}
	line.Expect(total, false)
	out = stdout
	if progress.For(stdout).Terminal() {
		out = line.Permanent()
	}
	return out, line, line.Done
}
