package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"weaseldb/internal/browsertest"
)

// load_tester compare: runs of a real server, a plain one, an open-loop
// one and a merged one, make one page, opened in Chromium as a person
// would: no script error, no request, a row per run named by its file,
// every overlaid chart drawn with a line per run, the noise judged.
func TestComparePage(t *testing.T) {
	b := browsertest.ForTest(t)
	files := realResults(t)
	page := filepath.Join(t.TempDir(), "cmp.html")
	var out, errOut bytes.Buffer
	inputs := []string{files["plain"], files["rate"], files["merged"]}
	if code := run(append(append([]string{"compare"}, inputs...), "-o", page), &out, &errOut); code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	const expr = `({facts: ` + browsertest.FactsExpr + `,
	  runs: [...document.querySelectorAll("[data-run]")].map(e => e.dataset.run),
	  noise: [...document.querySelectorAll("[data-noise]")].map(e => e.dataset.noise),
	  lines: Object.fromEntries([...document.querySelectorAll("svg.chart")].map(s => [s.dataset.chart, s.querySelectorAll("polyline").length]))})`
	rep, err := b.Open(context.Background(), "file://"+page, expr, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.ConsoleErrors) > 0 || len(rep.Requests) > 0 {
		t.Errorf("console errors %q, requests %q: want none", rep.ConsoleErrors, rep.Requests)
	}
	var v struct {
		Facts browsertest.Facts `json:"facts"`
		Runs  []string          `json:"runs"`
		Noise []string          `json:"noise"`
		Lines map[string]int    `json:"lines"`
	}
	if err := json.Unmarshal(rep.Value, &v); err != nil {
		t.Fatal(err)
	}
	if strings.Join(v.Runs, ",") != "plain.json,rate.json,merged.json" {
		t.Errorf("runs %q: want each named by its file, in order", v.Runs)
	}
	if len(v.Noise) != 4 { // req/s and p99 of each run against the first
		t.Errorf("noise rows %q", v.Noise)
	}
	for _, id := range []string{"compare-spectrum", "compare-throughput", "compare-p99"} {
		if v.Lines[id] != 3 {
			t.Errorf("chart %s: %d lines, want one per run (charts %v)", id, v.Lines[id], v.Lines)
		}
	}
	for _, c := range v.Facts.Charts {
		if c.Drawn == 0 || c.Width < 100 {
			t.Errorf("chart %s: %d elements in %.0f px", c.ID, c.Drawn, c.Width)
		}
	}
}

// Bad input to compare is one line and exit 2: fewer than two results,
// no -o, an unreadable file, a JSON that is not a run's result (a
// rate-steps document included).
func TestCompareBadInput(t *testing.T) {
	files := realResults(t)
	dir := t.TempDir()
	notResult := filepath.Join(dir, "other.json")
	if err := os.WriteFile(notResult, []byte(`{"name": "something else"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "cmp.html")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"one input", []string{files["plain"], "-o", out}, "got 1 result files"},
		{"no -o", []string{files["plain"], files["rate"]}, "no -o"},
		{"unreadable", []string{files["plain"], filepath.Join(dir, "missing.json"), "-o", out}, "missing.json"},
		{"not a result", []string{files["plain"], notResult, "-o", out}, "other.json"},
		{"steps document", []string{files["plain"], files["steps"], "-o", out}, "steps.json"},
		{"bad flag", []string{"--nope", files["plain"], files["rate"], "-o", out}, "nope"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(append([]string{"compare"}, tc.args...), &stdout, &stderr)
			if code != exitUsage || strings.Count(stderr.String(), "\n") != 1 || !strings.Contains(stderr.String(), tc.want) {
				t.Errorf("exit %d, stderr %q: want exit 2, one line naming %q", code, stderr.String(), tc.want)
			}
			if _, err := os.Stat(out); err == nil {
				t.Error("a page was written")
			}
		})
	}
}
