package loadtester

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
	"weaseldb/loadtester/result"
)

// Merge's own behaviour; cmd/load_tester's tests run the merge command
// (its refusals, exit statuses and outputs) on results of real runs.

// mergeFixture makes one real result (a short in-process run) and returns
// it as generic JSON, to derive bad inputs from.
func mergeFixture(t *testing.T) map[string]any {
	t.Helper()
	s := startTestServer(t, "tcp", nil)
	cfg := testConfig(s)
	cfg.Duration = 500 * time.Millisecond
	var buf bytes.Buffer
	if err := result.WriteJSON(&buf, runOK(t, cfg)); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// mergeInput is generic JSON as ReadResult would read it from name.
func mergeInput(t *testing.T, name string, v any) result.MergeInput {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	r, err := result.ParseResult(data, name)
	if err != nil {
		t.Fatal(err)
	}
	return result.MergeInput{Path: name, Result: r}
}

// mergeAndPrint merges inputs and returns the merged result as its JSON
// reads back, and its summary as the command prints it.
func mergeAndPrint(t *testing.T, inputs ...result.MergeInput) (*result.Result, string) {
	t.Helper()
	m, err := result.Merge(inputs)
	if err != nil {
		t.Fatalf("merge: %v", err)
	}
	var out, js bytes.Buffer
	m.PrintSummary(&out)
	m.PrintInstances(&out)
	if err := result.WriteJSON(&js, m); err != nil {
		t.Fatal(err)
	}
	back, err := result.ParseResult(js.Bytes(), "merged.json")
	if err != nil {
		t.Fatal(err)
	}
	return back, out.String()
}

// clone deep-copies generic JSON.
func clone(t *testing.T, m map[string]any) map[string]any {
	t.Helper()
	data, _ := json.Marshal(m)
	var c map[string]any
	json.Unmarshal(data, &c)
	return c
}

// TestMergeInterruptedRuns: an interrupted run ends with a partial interval
// (a few milliseconds past the last whole one). Merged, it must land in the
// seconds it covers, and the open connections, a gauge, must count each
// instance once: two instances of 4 connections each are 8 open, not 16.
func TestMergeInterruptedRuns(t *testing.T) {
	base := mergeFixture(t)
	ivs := base["intervals"].([]any)
	last := ivs[len(ivs)-1].(map[string]any)
	partial := clone(t, last)
	partial["t_s"] = last["t_s"].(float64) + 0.003
	partial["length_s"] = 0.003
	base["intervals"] = append(ivs, partial)
	open := int(last["open_connections"].(float64))
	other := clone(t, base)
	other["instance"] = "b"
	merged, stdout := mergeAndPrint(t, mergeInput(t, "a.json", base), mergeInput(t, "b.json", other))
	if n, want := len(merged.Intervals), len(ivs)+1; n != want {
		t.Errorf("%d merged intervals, want %d (the partial one in a slot of its own)", n, want)
	}
	for i, iv := range merged.Intervals {
		if iv.OpenConnections != 2*open {
			t.Errorf("interval %d: %d open connections, want %d (each instance's %d once)", i, iv.OpenConnections, 2*open, open)
		}
	}
	if got := merged.Intervals[len(merged.Intervals)-1]; got.LengthS > 0.01 {
		t.Errorf("last merged interval lasts %.3f s, want the partial one's 0.003 s", got.LengthS)
	}
	if want := fmt.Sprintf("%d open at the end", 2*open); !strings.Contains(stdout, want) {
		t.Errorf("summary lacks %q:\n%s", want, stdout)
	}
}

// TestMergeWarnsOfTheSameResultTwice: two inputs with one instance name
// and one window are almost surely one file given twice, which would double
// every count.
func TestMergeWarnsOfTheSameResultTwice(t *testing.T) {
	base := mergeFixture(t)
	_, stdout := mergeAndPrint(t, mergeInput(t, "a.json", base), mergeInput(t, "copy.json", base))
	if !strings.Contains(stdout, "appears 2 times") {
		t.Errorf("no warning about the repeated instance:\n%s", stdout)
	}
}
