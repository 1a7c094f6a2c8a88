// Package peertable turns the measurements of scripts/compare_peers.sh into
// the anchors table: per-peer medians, per-round ratios against weaseldb
// and load_tester, the goals of issue 42 item 3 judged against them, and
// the markdown spliced into README.md and docs/anchors.md. It is pure: it
// reads and returns values, and cmd/peers does the files.
package peertable

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// The kinds of sample the script writes, one JSON object a line.
const (
	KindLoad         = "load"         // one round of one peer under load
	KindInstructions = "instructions" // one callgrind count over a window
	KindSyscalls     = "syscalls"     // one strace count over a window
	KindSkip         = "skip"         // a peer or a measurement not made, and why
)

// Sample is one measurement. A load sample has Round, Requests, Seconds,
// CPUNs, SysNs (the system part of CPUNs; absent in samples from before it
// was measured) and, for servers, Switches; an instructions or syscalls sample has
// Requests and Count; a skip has Note (and Metric when only one measurement
// of the peer was not made).
type Sample struct {
	Kind     string   `json:"kind"`
	Side     string   `json:"side"` // "server" or "client"
	Scenario string   `json:"scenario"`
	Peer     string   `json:"peer"`
	Round    int      `json:"round,omitempty"`
	Requests float64  `json:"requests,omitempty"`
	Seconds  float64  `json:"seconds,omitempty"`
	CPUNs    float64  `json:"cpu_ns,omitempty"`
	SysNs    *float64 `json:"sys_ns,omitempty"`
	Switches *float64 `json:"switches,omitempty"`
	Count    float64  `json:"count,omitempty"`
	// CountAll is an instructions sample's unfiltered count (Count is
	// after the cost tier's filter); 0 when not given.
	CountAll float64 `json:"count_all,omitempty"`
	Metric   string  `json:"metric,omitempty"`
	Note     string  `json:"note,omitempty"`
}

// ReadSamples reads JSON lines; blank lines are skipped, and an error names
// the line.
func ReadSamples(r io.Reader) ([]Sample, error) {
	var out []Sample
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		var s Sample
		if err := json.Unmarshal([]byte(line), &s); err != nil {
			return nil, fmt.Errorf("peertable: sample line %d: %w", n, err)
		}
		if err := s.validate(); err != nil {
			return nil, fmt.Errorf("peertable: sample line %d: %w", n, err)
		}
		out = append(out, s)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("peertable: samples: %w", err)
	}
	return out, nil
}

// validate rejects a sample the table could only get wrong: a count per
// request over no requests, or one that names no peer.
func (s Sample) validate() error {
	if s.Side == "" || s.Scenario == "" || s.Peer == "" {
		return fmt.Errorf("side, scenario and peer are required (got %q, %q, %q)", s.Side, s.Scenario, s.Peer)
	}
	switch s.Kind {
	case KindLoad, KindInstructions, KindSyscalls:
		if s.Requests <= 0 {
			return fmt.Errorf("%s %s %s: no requests (a failed run is a skip, with its reason)", s.Kind, s.Scenario, s.Peer)
		}
	case KindSkip:
		if s.Note == "" {
			return fmt.Errorf("skip of %s %s says no reason", s.Scenario, s.Peer)
		}
	default:
		return fmt.Errorf("unknown kind %q", s.Kind)
	}
	return nil
}
