package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"weaseldb/server/cpuwork"
)

func TestParseArgs(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		want    []int
		wantErr string
	}{
		{"one count", []string{"4000"}, []int{4000}, ""},
		{"flags after counts", []string{"4000", "--runs", "5", "8000"}, []int{4000, 8000}, ""},
		{"target only", []string{"--target", "740ns"}, nil, ""},
		{"nothing", nil, nil, "give ITERATIONS or --target"},
		{"not a number", []string{"many"}, nil, "want a whole number"},
		{"negative", []string{"-5"}, nil, "flag provided but not defined"},
		{"bad runs", []string{"--runs", "0", "10"}, nil, "--runs 0"},
		{"bad target", []string{"--target", "-1ns"}, nil, "--target"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o, err := parseArgs(tc.args, &bytes.Buffer{})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(o.iterations) != len(tc.want) {
				t.Fatalf("iterations %v, want %v", o.iterations, tc.want)
			}
			for i := range tc.want {
				if o.iterations[i] != tc.want[i] {
					t.Fatalf("iterations %v, want %v", o.iterations, tc.want)
				}
			}
		})
	}
	if _, err := parseArgs([]string{"--help"}, &bytes.Buffer{}); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("--help gave %v", err)
	}
}

func TestRunWritesTheContractJSON(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.json")
	var out bytes.Buffer
	err := run(options{iterations: []int{1000, 2000}, runs: 3, runTime: time.Millisecond, jsonPath: path}, &out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "ns/call(med)") {
		t.Fatalf("no table in %q", out.String())
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"iterations", "ns_per_call_median", "ns_per_call_min", "ns_per_call_max", "runs", "results"} {
		if _, ok := got[key]; !ok {
			t.Fatalf("JSON lacks %q: %s", key, data)
		}
	}
	if got["iterations"].(float64) != 1000 || len(got["results"].([]any)) != 2 {
		t.Fatalf("unexpected JSON %s", data)
	}
}

func TestRunTarget(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cal.json")
	var out bytes.Buffer
	err := run(options{target: 5 * time.Microsecond, runs: 3, runTime: time.Millisecond, jsonPath: path}, &out)
	// This machine's speed decides whether two passes agree; either way the
	// JSON says what happened (the agreement logic itself is tested in
	// server/cpuwork against cost models).
	var notAgreed *cpuwork.NotAgreedError
	if err != nil && !errors.As(err, &notAgreed) {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	var got result
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	if got.TargetIterations <= 0 || got.TargetIterations != got.Iterations || got.TargetAgreed == nil || got.TargetSpread == nil {
		t.Fatalf("calibration JSON %s", data)
	}
	if *got.TargetAgreed != (err == nil) || len(got.TargetPasses) < 2 {
		t.Fatalf("agreed %v with error %v, %d passes: %s", *got.TargetAgreed, err, len(got.TargetPasses), data)
	}
	if !strings.Contains(out.String(), "passes") {
		t.Errorf("output does not say how the passes went: %q", out.String())
	}
}
