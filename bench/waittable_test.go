package bench

import (
	"regexp"
	"strings"
	"testing"

	"weaseldb/artifacts"
)

func TestFormatWaitTable(t *testing.T) {
	ws := &artifacts.WaitStrategies{Runs: []artifacts.WaitRun{
		{Bench: artifacts.BenchServer, Strategy: "Never", Cores: artifacts.CoresShared, Status: artifacts.StatusMeasured, Unit: "req/s",
			Throughput: ptr(51234.4), P50Ns: ptr(1500), P99Ns: ptr(2.5e6), CPUNsPerOp: ptr(812), IdleCoreFraction: ptr(0.9712)},
		{Bench: artifacts.BenchServer, Strategy: "Never", Cores: artifacts.CoresDedicated, Status: artifacts.StatusSkipped, Reason: "needs 7 CPUs (6 dedicated + 1 for the rest), this process may use 2 (0-1)"},
	}}
	out := FormatWaitTable(ws)
	for _, want := range []string{"51,234 req/s", "1.50µs", "2.50ms", "812.0ns", "97.12%", "skipped: needs 7 CPUs"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if n := strings.Count(out, "\n"); n != 3 {
		t.Errorf("table has %d lines, want header + 2", n)
	}
	if line := strings.Split(out, "\n")[1]; !regexp.MustCompile(` - +97\.12%$`).MatchString(line) {
		t.Errorf("client CPU not measured should print -: %q", line)
	}
}

// A server run with unfinished or dropped requests is flagged in the table.
func TestFormatWaitTableUnclean(t *testing.T) {
	ws := &artifacts.WaitStrategies{Runs: []artifacts.WaitRun{
		{Bench: artifacts.BenchServer, Strategy: "Never", Cores: artifacts.CoresShared, Status: artifacts.StatusMeasured, Unit: "req/s",
			Throughput: ptr(51234.4), Unfinished: 12, Dropped: 3},
	}}
	if out := FormatWaitTable(ws); !strings.Contains(out, "NOT CLEAN: 12 unfinished, 3 dropped") {
		t.Errorf("the table does not flag it:\n%s", out)
	}
}

func TestFormatWaitSkipped(t *testing.T) {
	ws := &artifacts.WaitStrategies{AllowedCPUs: "0-1", Runs: []artifacts.WaitRun{
		{Bench: artifacts.BenchServer, Strategy: "Never", Cores: artifacts.CoresShared, Status: artifacts.StatusMeasured},
		{Bench: artifacts.BenchPipeline, Strategy: "Never", Cores: artifacts.CoresDedicated, Status: artifacts.StatusSkipped, CPUsNeeded: 4},
	}}
	want := "\nskipped 1 runs for want of CPUs (this process may use 0-1):\n  pipeline Never on dedicated cores needs 4 CPUs\n"
	if got := FormatWaitSkipped(ws); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	ws.Runs = ws.Runs[:1]
	if got := FormatWaitSkipped(ws); got != "" {
		t.Errorf("nothing skipped: got %q", got)
	}
}
