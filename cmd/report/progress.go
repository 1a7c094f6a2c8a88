package main

import (
	"fmt"
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

// follow is `report progress`: it shows the lines read from in (a step's
// output, which the reproduction script also logs) as one line rewritten
// in place when out is a terminal, with the time run and, when total is
// known (> 0), about how long is left; elsewhere the lines pass through.
// A step's own progress line cannot reach the terminal through the tee
// that logs it, so the script draws it here instead.
func follow(in io.Reader, out io.Writer, total time.Duration) error {
	line := progress.For(out)
	line.Expect(total, false)
	defer line.Done()
	if _, err := io.Copy(line, in); err != nil {
		return fmt.Errorf("progress: %w", err)
	}
	return nil
}

// followCmd parses `report progress [--total SECONDS]`.
func followCmd(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlags("report progress", stderr)
	totalS := fs.Float64("total", 0, "seconds the step is expected to take (0: unknown, only the time run is shown)")
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	if *totalS < 0 {
		return fmt.Errorf("report progress: --total %g: want seconds >= 0", *totalS)
	}
	return follow(stdin, stdout, time.Duration(*totalS*float64(time.Second)))
}
