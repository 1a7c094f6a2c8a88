package peertable

import "slices"

// ratios takes every subject of a scenario against every other peer in it,
// for each metric both measured.
func ratios(peers []PeerEntry) []Ratio {
	out := []Ratio{}
	for _, sc := range Scenarios {
		for _, subj := range peers {
			if subj.Scenario != sc.Name || subj.Side != sc.Side || !slices.Contains(sc.Subjects, subj.Peer) {
				continue
			}
			for _, p := range peers {
				if p.Scenario != sc.Name || p.Side != sc.Side || p.Peer == subj.Peer || subjectBefore(sc, p.Peer, subj.Peer) {
					continue
				}
				out = append(out, pairRatios(subj, p)...)
			}
		}
	}
	return out
}

// pairRatios: the per-round metrics round by round, the counts once.
func pairRatios(a, b PeerEntry) []Ratio {
	var out []Ratio
	add := func(metric string, perRound []float64, value float64) {
		out = append(out, Ratio{Scenario: a.Scenario, Subject: a.Peer, Peer: b.Peer, Metric: metric, PerRound: perRound, Value: value})
	}
	perRound := []struct {
		metric string
		get    func(RoundEntry) *float64
	}{
		{MetricRPS, func(r RoundEntry) *float64 { return &r.RequestsPerSec }},
		{MetricCPU, func(r RoundEntry) *float64 { return &r.CPUNsPerRequest }},
		{MetricSwitches, func(r RoundEntry) *float64 { return r.SwitchesPerRequest }},
	}
	for _, m := range perRound {
		if xs := roundRatios(a.Rounds, b.Rounds, m.get); len(xs) > 0 {
			add(m.metric, xs, Median(xs))
		}
	}
	if v, ok := ratioOf(a.InstructionsPerRequest, b.InstructionsPerRequest); ok {
		add(MetricInstructions, nil, v)
	}
	if v, ok := ratioOf(a.SyscallsPerRequest, b.SyscallsPerRequest); ok {
		add(MetricSyscalls, nil, v)
	}
	return out
}

// roundRatios pairs rounds by number; a round either side lacks, or whose
// denominator is 0, has no ratio.
func roundRatios(a, b []RoundEntry, get func(RoundEntry) *float64) []float64 {
	var out []float64
	for _, ra := range a {
		for _, rb := range b {
			if ra.Round != rb.Round {
				continue
			}
			if v, ok := ratioOf(get(ra), get(rb)); ok {
				out = append(out, v)
			}
		}
	}
	return out
}

func ratioOf(a, b *float64) (float64, bool) {
	if a == nil || b == nil || *b == 0 {
		return 0, false
	}
	return *a / *b, true
}

// subjectBefore: a is a subject listed before b, so a/b is already in the
// table and b/a would only say it again.
func subjectBefore(sc Scenario, a, b string) bool {
	ia, ib := slices.Index(sc.Subjects, a), slices.Index(sc.Subjects, b)
	return ia >= 0 && ib >= 0 && ia < ib
}
