package benchmain

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
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

func TestWriteJSON(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.json")
	if err := WriteJSON(path, map[string]int{"iterations": 4000}); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	var got map[string]int
	if err := json.Unmarshal(data, &got); err != nil || got["iterations"] != 4000 || !strings.HasSuffix(string(data), "}\n") {
		t.Fatalf("wrote %q (%v)", data, err)
	}
	if err := WriteJSON(filepath.Join(t.TempDir(), "no", "such", "dir.json"), 1); err == nil || !strings.Contains(err.Error(), "write JSON") {
		t.Fatalf("unwritable path: %v", err)
	}
	if err := WriteJSON(path, func() {}); err == nil || !strings.Contains(err.Error(), "encode JSON") {
		t.Fatalf("unencodable value: %v", err)
	}
}
