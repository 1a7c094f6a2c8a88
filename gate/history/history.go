// Package history is the gate's history tier: every main-branch gate
// result appended to a file of JSON lines (gate record), and change points
// found over each scenario's series of B's figures (gate history). A step
// of 1% that one A/B run cannot call shows up as a change point once
// enough commits lie on either side of it; the cost tier's counts, which
// hardly move between runs, make such a step visible after a few commits.
//
// It reads gate/result (what gate record appends) and finds steps with
// gate/stats' change points; it runs no server and imports neither the
// engine (package gate) nor the renderers.
package history

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"time"

	"weaseldb/gate/result"
	"weaseldb/gate/stats"
	"weaseldb/gate/verdict"
)

// Version is the schema version of a history line.
const Version = 1

// Entry is one recorded gate run of a main-branch commit.
type Entry struct {
	Version   int             `json:"version"`
	Time      string          `json:"time"` // RFC 3339, UTC
	Commit    string          `json:"commit"`
	Ref       string          `json:"ref,omitempty"`
	Verdict   verdict.Verdict `json:"verdict"`
	Machine   result.Machine  `json:"machine"`
	Scenarios []Scenario      `json:"scenarios"`
}

// Scenario is one scenario's figures of B (the commit recorded).
type Scenario struct {
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

// FromResult is the line a result makes for commit (a one-workload
// run records its one scenario, ImplicitScenarioName).
func FromResult(r *result.Result, commit, ref string, now time.Time) (Entry, error) {
	if commit == "" {
		return Entry{}, errors.New("record: no commit to record the result under (--commit)")
	}
	if len(r.Scenarios) == 0 {
		return Entry{}, fmt.Errorf("record: the result has no scenarios (%s)", r.Reason)
	}
	e := Entry{Version: Version, Time: now.UTC().Format(time.RFC3339), Commit: commit, Ref: ref,
		Verdict: r.Verdict, Machine: r.Machine}
	for _, s := range r.Scenarios {
		h := Scenario{Name: s.Name}
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

// Append appends one line to the history file (created if absent).
// The line is written in one write on a file opened for appending, so a
// reader never sees half of it.
func Append(path string, e Entry) error {
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

// Read reads a history file. A line that is not a history entry is
// an error naming the file and the line: nothing is guessed.
func Read(path string) ([]Entry, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	defer f.Close()
	return parse(f, path)
}

func parse(r io.Reader, name string) ([]Entry, error) {
	var out []Entry
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 16<<20)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var e Entry
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&e); err != nil {
			return nil, fmt.Errorf("history %s line %d: not a history entry: %w (remove or fix the line)", name, n, err)
		}
		if e.Version != Version || e.Commit == "" {
			return nil, fmt.Errorf("history %s line %d: version %d, commit %q: want version %d and a commit", name, n, e.Version, e.Commit, Version)
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
var metrics = []struct {
	Name    string
	UpWorse bool
	Value   func(Scenario) float64
}{
	{"cost", true, func(h Scenario) float64 { return h.Instructions }},
	{"allocs", true, func(h Scenario) float64 { return h.AllocsPerRequest }},
	{"cpu", true, func(h Scenario) float64 { return h.CPUNSPerRequest }},
	{"time", false, func(h Scenario) float64 { return h.Sample }},
}

// Series is one scenario's figure over the recorded commits, and
// the steps found in it.
type Series struct {
	Scenario string    `json:"scenario"`
	Metric   string    `json:"metric"`
	UpWorse  bool      `json:"up_is_worse"`
	Commits  []string  `json:"commits"`
	Values   []float64 `json:"values"`
	Steps    []Step    `json:"steps"`
	// Skipped says why a series was not searched (too few points).
	Skipped string `json:"skipped,omitempty"`
}

// Step is a change point: the series stepped between the commit
// before it and Commit.
type Step struct {
	stats.ChangePoint
	Commit string `json:"commit"` // the first commit after the step
	Prev   string `json:"prev_commit"`
	Worse  bool   `json:"worse"`
}

// Analyze finds the steps of every scenario's series, in the order
// the scenarios first appear. Entries missing a figure are left out of
// that figure's series (a run whose cost tier did not run, say).
func Analyze(entries []Entry, o stats.ChangePointOptions) []Series {
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
	var out []Series
	for _, name := range names {
		for _, m := range metrics {
			s := Series{Scenario: name, Metric: m.Name, UpWorse: m.UpWorse}
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
				s.Steps = append(s.Steps, Step{ChangePoint: cp, Commit: s.Commits[cp.Index], Prev: s.Commits[cp.Index-1],
					Worse: (cp.Change > 0) == m.UpWorse})
			}
			out = append(out, s)
		}
	}
	return out
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

// LastStepWorse reports whether the last step of any series is for the
// worse (gate history --fail-on-worse): a step the series since recovered
// from is history, not news.
func LastStepWorse(series []Series) bool {
	for _, s := range series {
		if n := len(s.Steps); n > 0 && s.Steps[n-1].Worse {
			return true
		}
	}
	return false
}
