package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"weaseldb/internal/affinity"
	"weaseldb/pipebench"
)

func TestParseArgs(t *testing.T) {
	tests := []struct {
		name      string
		args      []string
		wantErr   string
		wantRuns  int
		wantIdle  time.Duration
		wantFam   int
		wantQuick bool
	}{
		{"defaults", nil, "", 10, 2 * time.Second, 4, false},
		{"quick", []string{"--quick"}, "", 3, 500 * time.Millisecond, 4, true},
		{"families", []string{"--families", "batch, wait_strategy"}, "", 10, 2 * time.Second, 2, false},
		{"unknown family", []string{"--families", "nope"}, "unknown family", 0, 0, 0, false},
		{"no family", []string{"--families", ","}, "at least one family", 0, 0, 0, false},
		{"stray argument", []string{"extra"}, "unexpected argument", 0, 0, 0, false},
		{"negative runs", []string{"--runs", "-1"}, "must not be negative", 0, 0, 0, false},
		{"too few CPUs", []string{"--cpus", "0,0"}, "need 3 CPUs", 0, 0, 0, false},
		{"unavailable CPU", []string{"--cpus", "0,0,100000"}, "not available to this process (allowed: ", 0, 0, 0, false},
		{"bad CPU list", []string{"--cpus", "x"}, "bad CPU", 0, 0, 0, false},
		{"latency", []string{"--families", "latency"}, "", 10, 2 * time.Second, 1, false},
		{"latency needs 2 CPUs listed", []string{"--families", "latency", "--cpus", "0"}, "need 2 CPUs", 0, 0, 0, false},
		{"bad latency samples", []string{"--families", "latency", "--latency-samples", "0"}, "--latency-samples must be at least 1", 0, 0, 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o, err := parseArgs(tc.args, &bytes.Buffer{})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got %v, want an error containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if o.suite.Runs != tc.wantRuns || o.suite.Idle != tc.wantIdle || len(o.suite.Families) != tc.wantFam || o.suite.Quick != tc.wantQuick {
				t.Fatalf("got %+v", o)
			}
		})
	}
	if _, err := parseArgs([]string{"-h"}, &bytes.Buffer{}); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("-h gave %v", err)
	}
}

// A tiny run of one family writes a table and the contract's JSON.
func TestRunWritesTableAndJSON(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bp.json")
	var out bytes.Buffer
	o := options{suite: pipebench.Suite{Runs: 1, Idle: 50 * time.Millisecond, Families: []string{"wait_strategy"}}, jsonPath: path}
	if err := run(o, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"wait_strategy", "WaitIfUpstreamIdle", "channel_batched", "idle CPU"} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("output lacks %q:\n%s", want, out.String())
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Cases []map[string]any `json:"cases"`
		Idle  []map[string]any `json:"idle"`
	}
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Cases) != 5 || len(got.Idle) != 3 {
		t.Fatalf("%d cases and %d idle entries, want 5 and 3", len(got.Cases), len(got.Idle))
	}
	for _, key := range []string{"family", "name", "impl", "strategy", "stages", "batch", "spin_iters", "ns_per_item", "items_per_sec", "cpu_ns_per_item"} {
		if _, ok := got.Cases[0][key]; !ok {
			t.Fatalf("case lacks %q: %v", key, got.Cases[0])
		}
	}
	for _, key := range []string{"strategy", "core_fraction"} {
		if _, ok := got.Idle[0][key]; !ok {
			t.Fatalf("idle entry lacks %q: %v", key, got.Idle[0])
		}
	}
}

// --cpus pins the producer and each stage thread; a run still completes.
func TestRunPinned(t *testing.T) {
	allowed, err := affinity.AllowedCPUs()
	if err != nil {
		t.Fatal(err)
	}
	// One stage (so no two spinning threads share a CPU on a small machine).
	list := fmt.Sprintf("%d,%d", allowed[0], allowed[len(allowed)-1])
	o, err := parseArgs([]string{"--cpus", list, "--families", "single_stage", "--runs", "1"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	// The producer is pinned on the calling goroutine's thread, which stays
	// locked: run it on a goroutine of its own so the test's thread is spared.
	done := make(chan error, 1)
	var out bytes.Buffer
	go func() { done <- run(o, &out) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("pinned run did not finish")
	}
	if !strings.Contains(out.String(), "producer on CPU") {
		t.Fatalf("output does not say how it pinned:\n%s", out.String())
	}
}

// --print-plan prints one line per hot thread with its CPU, physical core
// and node, and runs nothing; on a machine with fewer cores than hot
// threads it says how many it needs instead.
func TestPrintPlan(t *testing.T) {
	o, err := parseArgs([]string{"--cpus", "auto", "--print-plan", "--families", "batch"}, &bytes.Buffer{})
	if err != nil {
		if !strings.Contains(err.Error(), "needs ") {
			t.Fatalf("--print-plan: %v, want a plan or the cores it needs", err)
		}
		t.Skipf("this machine is too small for a plan: %v", err)
	}
	var out bytes.Buffer
	if err := run(o, &out); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	line := regexp.MustCompile(`^(producer|stage \d+) cpu=\d+ core=\d+ node=\d+ idle=\S+$`)
	threads := 0
	for _, l := range lines {
		if line.MatchString(l) {
			threads++
		}
	}
	if want := 1 + pipebench.MaxStages(o.suite.Families); threads != want {
		t.Errorf("%d thread lines, want %d (the producer and its stages):\n%s", threads, want, out.String())
	}
	if _, err := parseArgs([]string{"--print-plan"}, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "only with --cpus auto") {
		t.Errorf("--print-plan without --cpus auto: %v", err)
	}
}

// A run with --cpus auto's plan prints it, each line after "plan: ",
// before the first result.
func TestRunPrintsPlanFirst(t *testing.T) {
	var out bytes.Buffer
	o := options{suite: pipebench.Suite{Runs: 1, Families: []string{"single_stage"},
		CPUs: pipebench.CPUChoice{Plan: []string{"producer cpu=0 core=0 node=0 idle=none", "warning: IRQ 38 (eth0, virtio2-input.0) may land on CPU 0"}}}}
	if err := run(o, &out); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	first, warn, table := strings.Index(text, "plan: producer cpu=0 core=0 node=0 idle=none\n"),
		strings.Index(text, "plan: warning: IRQ 38"), strings.Index(text, "single_stage")
	if first < 0 || warn < first || table < warn {
		t.Fatalf("want the plan's lines, in order, before the first result:\n%s", text)
	}
}
