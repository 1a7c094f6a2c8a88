package benchmain

import (
	"bytes"
	"errors"
	"flag"
	"io"
	"testing"
)

type opts struct{ n int }

func TestRunExitStatuses(t *testing.T) {
	parseOK := func([]string, io.Writer) (opts, error) { return opts{n: 3}, nil }
	tests := []struct {
		name     string
		parse    func([]string, io.Writer) (opts, error)
		runErr   error
		want     int
		wantLine string
	}{
		{"runs", parseOK, nil, ExitOK, ""},
		{"help", func([]string, io.Writer) (opts, error) { return opts{}, flag.ErrHelp }, nil, ExitOK, ""},
		{"bad flags", func([]string, io.Writer) (opts, error) { return opts{}, errors.New("--runs 0: want >= 1") }, nil, ExitBadArgs, "bench_x: --runs 0: want >= 1\n"},
		{"run fails", parseOK, errors.New("no clock"), ExitFailed, "bench_x: no clock\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			ran := false
			run := func(o opts, w io.Writer) error {
				ran = true
				if o.n != 3 {
					t.Errorf("run got %+v", o)
				}
				return tc.runErr
			}
			if got := Run("bench_x", nil, &stdout, &stderr, tc.parse, run); got != tc.want {
				t.Fatalf("exit %d, want %d", got, tc.want)
			}
			if stderr.String() != tc.wantLine {
				t.Errorf("stderr %q, want %q", stderr.String(), tc.wantLine)
			}
			if ran != (tc.want != ExitBadArgs && tc.name != "help") {
				t.Errorf("run called: %v", ran)
			}
		})
	}
}
