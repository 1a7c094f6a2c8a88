// Package benchmain is the body the benchmark commands (cmd/bench_cpu_work,
// cmd/bench_pipeline) share: call their flag parser, run, and return the
// exit status the tree's tools use (their mains exit with it). Their JSON
// results are written with internal/jsonfile, the tree's one JSON writer.
package benchmain

import (
	"errors"
	"flag"
	"fmt"
	"io"
)

// Exit statuses of a benchmark command.
const (
	ExitOK      = 0 // the benchmark ran (or --help was asked for)
	ExitFailed  = 1 // it ran and failed
	ExitBadArgs = 2 // the flags were refused
)

// Run parses args and runs the benchmark: ExitOK after --help (parse printed
// the usage), ExitBadArgs with "name: reason" when parse refuses the flags,
// ExitFailed with "name: reason" when run fails.
func Run[O any](name string, args []string, stdout, stderr io.Writer, parse func([]string, io.Writer) (O, error), run func(O, io.Writer) error) int {
	opts, err := parse(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return ExitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return ExitBadArgs
	}
	if err := run(opts, stdout); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return ExitFailed
	}
	return ExitOK
}
