package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"weaseldb/internal/affinity"
	"weaseldb/pipebench"
)

// The latency family's JSON keeps the contract (docs/CONTRACTS.md): every
// case has impl, strategy, cores, skipped and handoff_latency_ns with p50,
// p99, p999, max and a histogram that decodes to the same count. With
// --cpus auto on 2 or more CPUs none is skipped; unpinned, the dedicated
// cases are skipped with a reason.
func TestLatencyJSONContract(t *testing.T) {
	allowed, err := affinity.AllowedCPUs()
	if err != nil {
		t.Fatal(err)
	}
	small := pipebench.LatencyParams{Samples: 5, Interval: 20 * time.Microsecond, MaxDuration: 5 * time.Second}
	for _, pinned := range []bool{true, false} {
		dir := t.TempDir()
		path := filepath.Join(dir, "lat.json")
		args := []string{"--families", "latency", "--json", path}
		if pinned {
			args = append(args, "--cpus", "auto")
		}
		o, err := parseArgs(args, &bytes.Buffer{})
		if err != nil {
			t.Fatal(err)
		}
		o.suite.Latency = small
		var out bytes.Buffer
		if err := run(o, &out); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.String(), "clock:") || !strings.Contains(out.String(), "round_trip") {
			t.Fatalf("output:\n%s", out.String())
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var got struct {
			Clock map[string]any   `json:"clock"`
			Cases []map[string]any `json:"cases"`
		}
		if err := json.Unmarshal(data, &got); err != nil {
			t.Fatal(err)
		}
		if _, ok := got.Clock["read_ns"]; !ok {
			t.Fatalf("clock %v", got.Clock)
		}
		if len(got.Cases) != 32 {
			t.Fatalf("%d cases, want 32 (16 cases x dedicated and shared)", len(got.Cases))
		}
		cores := map[string]int{}
		for _, c := range got.Cases {
			for _, k := range []string{"impl", "strategy", "cores", "skipped"} {
				if _, ok := c[k]; !ok {
					t.Fatalf("case lacks %q: %v", k, c)
				}
			}
			cores[c["cores"].(string)]++
			skipped := c["skipped"].(bool)
			wantSkipped := !pinned && c["cores"] == "dedicated" || pinned && len(allowed) < 2 && c["cores"] == "dedicated"
			if skipped != wantSkipped {
				t.Fatalf("case %v: skipped %v, want %v", c["name"], skipped, wantSkipped)
			}
			if skipped {
				if c["skip_reason"] == "" {
					t.Fatalf("skipped without a reason: %v", c)
				}
				continue
			}
			h, ok := c["handoff_latency_ns"].(map[string]any)
			if !ok {
				t.Fatalf("case lacks handoff_latency_ns: %v", c)
			}
			for _, k := range []string{"p50", "p99", "p999", "max", "histogram"} {
				if _, ok := h[k]; !ok {
					t.Fatalf("handoff_latency_ns lacks %q: %v", k, h)
				}
			}
			dec, err := hdrhistogram.Decode([]byte(h["histogram"].(string)))
			if err != nil {
				t.Fatal(err)
			}
			if dec.TotalCount() != int64(h["count"].(float64)) || dec.Max() < int64(h["p50"].(float64)) {
				t.Fatalf("histogram: %d values, max %d; case %v", dec.TotalCount(), dec.Max(), h)
			}
		}
		if cores["dedicated"] != 16 || cores["shared"] != 16 {
			t.Fatalf("cores %v", cores)
		}
	}
}
