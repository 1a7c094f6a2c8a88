package gate

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"weaseldb/gate/result"
	"weaseldb/gate/stats"
	"weaseldb/gate/verdict"
)

// The history tier: every main-branch gate result appended to a file of
// JSON lines (gate record), and change points found over each scenario's
// series of B's figures (gate history). A step of 1% that one A/B run
// cannot call shows up as a change point once enough commits lie on
// either side of it; the cost tier's counts, which hardly move between
// runs, make such a step visible after a few commits.

// HistoryVersion is the schema version of a history line.
const HistoryVersion = 1

// HistoryEntry is one recorded gate run of a main-branch commit.
type HistoryEntry struct {
	Version   int               `json:"version"`
	Time      string            `json:"time"` // RFC 3339, UTC
	Commit    string            `json:"commit"`
	Ref       string            `json:"ref,omitempty"`
	Verdict   verdict.Verdict   `json:"verdict"`
	Machine   result.Machine    `json:"machine"`
	Scenarios []HistoryScenario `json:"scenarios"`
}

// HistoryScenario is one scenario's figures of B (the commit recorded).
type HistoryScenario struct {
	Name string `json:"name"`
	// The time tier's: B's median req/s (1/latency for a latency metric),
	// B/A in that run, and B's median server CPU per request.
	Sample          float64 `json:"sample,omitempty"`
	RatioTime       float64 `json:"ratio_time,omitempty"`
	CPUNSPerRequest float64 `json:"cpu_ns_per_request,omitempty"`
	// The cost tier's: B's instructions per request (filtered and not)
	// and allocations per request.
	Instructions           float64 `json:"instructions_per_request,omitempty"`
	InstructionsUnfiltered float64 `json:"instructions_unfiltered_per_request,omitempty"`
	AllocsPerRequest       float64 `json:"allocs_per_request,omitempty"`
}

// HistoryFromResult is the line a result makes for commit (a one-workload
// run records its one scenario, ImplicitScenarioName).
func HistoryFromResult(r *result.Result, commit, ref string, now time.Time) (HistoryEntry, error) {
	if commit == "" {
		return HistoryEntry{}, errors.New("record: no commit to record the result under (--commit)")
	}
	if len(r.Scenarios) == 0 {
		return HistoryEntry{}, fmt.Errorf("record: the result has no scenarios (%s)", r.Reason)
	}
	e := HistoryEntry{Version: HistoryVersion, Time: now.UTC().Format(time.RFC3339), Commit: commit, Ref: ref,
		Verdict: r.Verdict, Machine: r.Machine}
	for _, s := range r.Scenarios {
		h := HistoryScenario{Name: s.Name}
		if s.B.MedianRPS > 0 && !math.IsNaN(s.B.MedianRPS) {
			h.Sample = s.B.MedianRPS
		}
		if s.CI.Ratio > 0 && !math.IsNaN(s.CI.Ratio) {
			h.RatioTime = s.CI.Ratio
		}
		if s.CPU != nil && s.CPU.MedianB > 0 && !math.IsNaN(s.CPU.MedianB) {
			h.CPUNSPerRequest = s.CPU.MedianB
		}
		if c := s.Cost; c != nil && c.B.InstructionsPerRequest > 0 {
			h.Instructions, h.InstructionsUnfiltered = c.B.InstructionsPerRequest, c.B.UnfilteredPerRequest
			h.AllocsPerRequest = c.B.AllocsPerRequest
		}
		e.Scenarios = append(e.Scenarios, h)
	}
	return e, nil
}

// AppendHistory appends one line to the history file (created if absent).
// The line is written in one write on a file opened for appending, so a
// reader never sees half of it.
func AppendHistory(path string, e HistoryEntry) error {
	line, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("record: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("record: %w", err)
	}
	if _, err := f.Write(append(line, '\n')); err != nil {
		f.Close()
		return fmt.Errorf("record: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("record: %w", err)
	}
	return nil
}

// ReadHistory reads a history file. A line that is not a history entry is
// an error naming the file and the line: nothing is guessed.
func ReadHistory(path string) ([]HistoryEntry, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	defer f.Close()
	return parseHistory(f, path)
}

func parseHistory(r io.Reader, name string) ([]HistoryEntry, error) {
	var out []HistoryEntry
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 16<<20)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var e HistoryEntry
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&e); err != nil {
			return nil, fmt.Errorf("history %s line %d: not a history entry: %w (remove or fix the line)", name, n, err)
		}
		if e.Version != HistoryVersion || e.Commit == "" {
			return nil, fmt.Errorf("history %s line %d: version %d, commit %q: want version %d and a commit", name, n, e.Version, e.Commit, HistoryVersion)
		}
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("history %s: %w", name, err)
	}
	return out, nil
}

// History metrics: which figure of a scenario a series follows, and
// whether up is worse.
var historyMetrics = []struct {
	Name    string
	UpWorse bool
	Value   func(HistoryScenario) float64
}{
	{"cost", true, func(h HistoryScenario) float64 { return h.Instructions }},
	{"allocs", true, func(h HistoryScenario) float64 { return h.AllocsPerRequest }},
	{"cpu", true, func(h HistoryScenario) float64 { return h.CPUNSPerRequest }},
	{"time", false, func(h HistoryScenario) float64 { return h.Sample }},
}

// HistorySeries is one scenario's figure over the recorded commits, and
// the steps found in it.
type HistorySeries struct {
	Scenario string        `json:"scenario"`
	Metric   string        `json:"metric"`
	UpWorse  bool          `json:"up_is_worse"`
	Commits  []string      `json:"commits"`
	Values   []float64     `json:"values"`
	Steps    []HistoryStep `json:"steps"`
	// Skipped says why a series was not searched (too few points).
	Skipped string `json:"skipped,omitempty"`
}

// HistoryStep is a change point: the series stepped between the commit
// before it and Commit.
type HistoryStep struct {
	stats.ChangePoint
	Commit string `json:"commit"` // the first commit after the step
	Prev   string `json:"prev_commit"`
	Worse  bool   `json:"worse"`
}

// AnalyzeHistory finds the steps of every scenario's series, in the order
// the scenarios first appear. Entries missing a figure are left out of
// that figure's series (a run whose cost tier did not run, say).
func AnalyzeHistory(entries []HistoryEntry, o stats.ChangePointOptions) []HistorySeries {
	o = o.WithDefaults()
	var names []string
	seen := map[string]bool{}
	for _, e := range entries {
		for _, s := range e.Scenarios {
			if !seen[s.Name] {
				seen[s.Name] = true
				names = append(names, s.Name)
			}
		}
	}
	var out []HistorySeries
	for _, name := range names {
		for _, m := range historyMetrics {
			s := HistorySeries{Scenario: name, Metric: m.Name, UpWorse: m.UpWorse}
			for _, e := range entries {
				for _, h := range e.Scenarios {
					if v := m.Value(h); h.Name == name && v > 0 && !math.IsNaN(v) && !math.IsInf(v, 0) {
						s.Commits, s.Values = append(s.Commits, e.Commit), append(s.Values, v)
					}
				}
			}
			if len(s.Values) == 0 {
				continue
			}
			if len(s.Values) < 2*o.MinSegment {
				s.Skipped = fmt.Sprintf("%d points: a step needs %d on each side", len(s.Values), o.MinSegment)
			}
			for _, cp := range stats.ChangePoints(s.Values, o) {
				s.Steps = append(s.Steps, HistoryStep{ChangePoint: cp, Commit: s.Commits[cp.Index], Prev: s.Commits[cp.Index-1],
					Worse: (cp.Change > 0) == m.UpWorse})
			}
			out = append(out, s)
		}
	}
	return out
}

// WriteHistoryReport prints every step found, then one line per series.
func WriteHistoryReport(w io.Writer, entries int, series []HistorySeries, o stats.ChangePointOptions) {
	o = o.WithDefaults()
	fmt.Fprintf(w, "history: %d runs; change points by E-divisive means, each split kept at p <= %g (%d permutations)\n",
		entries, o.Alpha, o.Permutations)
	steps := 0
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  scenario\tmetric\tbetween\tbefore\tafter\tchange\tp\t")
	for _, s := range series {
		for _, st := range s.Steps {
			steps++
			word := "better"
			if st.Worse {
				word = "WORSE"
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s..%s\t%.6g\t%.6g\t%+.2f%% %s\t%.3f\t\n", s.Scenario, s.Metric, short(st.Prev), short(st.Commit),
				st.Before, st.After, 100*st.Change, word, st.PValue)
		}
	}
	if steps > 0 {
		tw.Flush()
	} else {
		fmt.Fprintln(w, "  no step found")
	}
	var skipped []string
	for _, s := range series {
		if s.Skipped != "" {
			skipped = append(skipped, fmt.Sprintf("%s %s (%s)", s.Scenario, s.Metric, s.Skipped))
		}
	}
	if len(skipped) > 0 {
		fmt.Fprintf(w, "not searched: %s\n", strings.Join(skipped, "; "))
	}
}

// HeadCommit is the commit HEAD names in dir's repository.
func HeadCommit(ctx context.Context, dir string) (string, error) {
	out, err := gitOutput(ctx, dir, "rev-parse", "HEAD")
	if err != nil {
		return "", fmt.Errorf("record: no --commit given and git rev-parse HEAD failed: %w", err)
	}
	return firstLine(out), nil
}

// ReadResultJSON reads a gate run's --json file back: any mode's, of this
// schema version (an older file's fields sit elsewhere, and reading it
// would record zeros).
func ReadResultJSON(path string) (*result.Result, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("record: %w", err)
	}
	var v struct {
		Version int `json:"version"`
	}
	if err := json.Unmarshal(data, &v); err != nil {
		return nil, fmt.Errorf("record: %s: not a gate result: %w", path, err)
	}
	if v.Version != result.ResultVersion { // before the rest, whose fields an older version has elsewhere
		return nil, fmt.Errorf("record: %s: result version %d, want %d (rerun the gate with this build)", path, v.Version, result.ResultVersion)
	}
	var r result.Result
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("record: %s: not a gate result: %w", path, err)
	}
	return &r, nil
}
