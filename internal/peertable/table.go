package peertable

import (
	"fmt"
	"slices"
)

// Machine names where the table was measured.
type Machine struct {
	CPUModel  string `json:"cpu_model"`
	CPUFamily string `json:"cpu_family"`
	CPUs      int    `json:"cpus"`
	Kernel    string `json:"kernel"`
	GoVersion string `json:"go_version"`
}

// Run is how the script ran: what the table's header says of it.
type Run struct {
	Date      string  `json:"date"`
	Rounds    int     `json:"rounds"`
	DurationS float64 `json:"duration_s"`
	Setup     string  `json:"setup,omitempty"` // pinning, connections, rate: the script's words
	// ClientTarget is the server the plain client scenarios ran against
	// (TargetNginx or TargetWeaseldb; "" is nginx, as before it was asked).
	ClientTarget string `json:"client_target,omitempty"`
	// RateRPS is the open loop's rate (0: not known), which a HoldRate
	// goal's clients must hold.
	RateRPS float64 `json:"rate_rps,omitempty"`
}

// Table is peers.json.
type Table struct {
	Machine Machine       `json:"machine"`
	Run     Run           `json:"run"`
	Peers   []PeerEntry   `json:"peers"`
	Ratios  []Ratio       `json:"ratios"`
	Goals   []GoalVerdict `json:"goals"`
}

// PeerEntry is one peer in one scenario: medians over its rounds, and the
// counts made once. A nil figure was not measured (Skipped or Notes say why).
type PeerEntry struct {
	Side                   string   `json:"side"`
	Scenario               string   `json:"scenario"`
	Peer                   string   `json:"peer"`
	RequestsPerSec         *float64 `json:"requests_per_sec"`
	CPUNsPerRequest        *float64 `json:"cpu_ns_per_request"`
	InstructionsPerRequest *float64 `json:"instructions_per_request"`
	// InstructionsUnfilteredPerRequest counts what the cost tier's filter
	// leaves out too (the runtime's waiting, which follows the clock).
	InstructionsUnfilteredPerRequest *float64 `json:"instructions_unfiltered_per_request,omitempty"`
	SwitchesPerRequest               *float64 `json:"context_switches_per_request"`
	// KernelShare is the system part of the CPU (0..1): what the kernel's
	// system calls and network stack take of a request, which no change in
	// user space can save.
	KernelShare        *float64     `json:"kernel_share"`
	SyscallsPerRequest *float64     `json:"syscalls_per_request"`
	Rounds             []RoundEntry `json:"rounds,omitempty"`
	Skipped            string       `json:"skipped,omitempty"`
	Notes              []string     `json:"notes,omitempty"`
}

// RoundEntry is one round of one peer.
type RoundEntry struct {
	Round              int      `json:"round"`
	RequestsPerSec     float64  `json:"requests_per_sec"`
	CPUNsPerRequest    float64  `json:"cpu_ns_per_request"`
	SwitchesPerRequest *float64 `json:"context_switches_per_request,omitempty"`
	KernelShare        *float64 `json:"kernel_share,omitempty"`
}

// Ratio is subject/peer of one metric. For a metric measured every round,
// PerRound holds each round's ratio (the two runs were neighbours in time,
// so the machine's drift cancels) and Value is their median; for a count
// made once a side, Value is the ratio of the two.
type Ratio struct {
	Scenario string    `json:"scenario"`
	Subject  string    `json:"subject"`
	Peer     string    `json:"peer"`
	Metric   string    `json:"metric"`
	PerRound []float64 `json:"per_round,omitempty"`
	Value    float64   `json:"value"`
}

// Build makes the table from the samples: scenarios in Scenarios' order,
// peers in peerRank's (those it does not know in the order the samples
// first name them).
func Build(samples []Sample, m Machine, run Run) (Table, error) {
	t := Table{Machine: m, Run: run, Peers: []PeerEntry{}, Ratios: []Ratio{}}
	groups := make([][]Sample, len(Scenarios))
	for _, s := range samples {
		i := scenarioIndex(s.Side, s.Scenario)
		if i < 0 {
			return Table{}, fmt.Errorf("peertable: unknown scenario %s/%s (peer %s)", s.Side, s.Scenario, s.Peer)
		}
		groups[i] = append(groups[i], s)
	}
	for i, sc := range Scenarios {
		for _, peer := range peerOrder(groups[i]) {
			t.Peers = append(t.Peers, peerEntry(sc, peer, groups[i]))
		}
	}
	t.Ratios = ratios(t.Peers)
	for _, g := range Goals {
		t.Goals = append(t.Goals, judge(g, t.Ratios, t.Peers, run.RateRPS))
	}
	return t, nil
}

func peerOrder(samples []Sample) []string {
	var out []string
	for _, s := range samples {
		if !slices.Contains(out, s.Peer) {
			out = append(out, s.Peer)
		}
	}
	slices.SortStableFunc(out, func(a, b string) int { return rank(a) - rank(b) })
	return out
}

// peerEntry gathers one peer's samples in one scenario.
func peerEntry(sc Scenario, peer string, samples []Sample) PeerEntry {
	e := PeerEntry{Side: sc.Side, Scenario: sc.Name, Peer: peer}
	var instr, all, calls []float64
	for _, s := range samples {
		if s.Peer != peer {
			continue
		}
		switch s.Kind {
		case KindLoad:
			e.Rounds = append(e.Rounds, roundEntry(s))
		case KindInstructions:
			instr = append(instr, s.Count/s.Requests)
			if s.CountAll > 0 {
				all = append(all, s.CountAll/s.Requests)
			}
		case KindSyscalls:
			calls = append(calls, s.Count/s.Requests)
		case KindSkip:
			if s.Metric == "" {
				e.Skipped = s.Note
			} else {
				e.Notes = append(e.Notes, s.Metric+": "+s.Note)
			}
		}
	}
	slices.SortFunc(e.Rounds, func(a, b RoundEntry) int { return a.Round - b.Round })
	e.RequestsPerSec = medianOf(e.Rounds, func(r RoundEntry) (float64, bool) { return r.RequestsPerSec, true })
	e.CPUNsPerRequest = medianOf(e.Rounds, func(r RoundEntry) (float64, bool) { return r.CPUNsPerRequest, true })
	e.SwitchesPerRequest = medianOf(e.Rounds, func(r RoundEntry) (float64, bool) {
		if r.SwitchesPerRequest == nil {
			return 0, false
		}
		return *r.SwitchesPerRequest, true
	})
	e.KernelShare = medianOf(e.Rounds, func(r RoundEntry) (float64, bool) {
		if r.KernelShare == nil {
			return 0, false
		}
		return *r.KernelShare, true
	})
	e.InstructionsPerRequest = medianPtr(instr)
	e.InstructionsUnfilteredPerRequest = medianPtr(all)
	e.SyscallsPerRequest = medianPtr(calls)
	return e
}

func roundEntry(s Sample) RoundEntry {
	r := RoundEntry{Round: s.Round, RequestsPerSec: s.Requests / s.Seconds, CPUNsPerRequest: s.CPUNs / s.Requests}
	if s.Seconds <= 0 {
		r.RequestsPerSec = 0
	}
	if s.Switches != nil {
		x := *s.Switches / s.Requests
		r.SwitchesPerRequest = &x
	}
	if s.SysNs != nil && s.CPUNs > 0 {
		x := *s.SysNs / s.CPUNs
		r.KernelShare = &x
	}
	return r
}

func medianOf(rounds []RoundEntry, get func(RoundEntry) (float64, bool)) *float64 {
	var xs []float64
	for _, r := range rounds {
		if x, ok := get(r); ok {
			xs = append(xs, x)
		}
	}
	return medianPtr(xs)
}

func medianPtr(xs []float64) *float64 {
	if len(xs) == 0 {
		return nil
	}
	m := Median(xs)
	return &m
}
