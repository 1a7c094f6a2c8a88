package peertable

import "testing"

func TestGoalMet(t *testing.T) {
	for _, c := range []struct {
		op         string
		bar, ratio float64
		want       bool
	}{
		{">=", 1.2, 1.2, true}, {">=", 1.2, 1.19, false},
		{"<=", 0.8, 0.8, true}, {"<=", 0.8, 0.81, false},
		{"<", 1.0, 1.0, false}, {"<", 1.0, 0.99, true},
		{"?", 1.0, 1.0, false},
	} {
		g := Goal{Op: c.op, Bar: c.bar}
		if got := g.Met(c.ratio); got != c.want {
			t.Errorf("%s %v with %v: %v, want %v", c.op, c.bar, c.ratio, got, c.want)
		}
	}
}

func TestGoalsJudged(t *testing.T) {
	tab, err := Build(fixture(), Machine{}, Run{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[Goal]string{
		{Issue: issue42, Scenario: "ok_pipelined16", Subject: "weaseldb", Peer: "gnet", Metric: MetricRPS, Op: ">=", Bar: 1.2}:         VerdictMet,
		{Issue: issue42, Scenario: "ok_pipelined16", Subject: "weaseldb", Peer: "gnet", Metric: MetricInstructions, Op: "<", Bar: 1.0}: VerdictMet,
		{Issue: issue42, Scenario: "ok_pipelined16", Subject: "weaseldb", Peer: "fasthttp", Metric: MetricRPS, Op: ">=", Bar: 1.5}:     VerdictNotMeasured,
		{Issue: issue42, Scenario: "open_loop", Subject: "load_tester", Peer: "wrk2", Metric: MetricCPU, Op: "<=", Bar: 0.8}:           VerdictNotMeasured,
	}
	if len(tab.Goals) != len(Goals) {
		t.Fatalf("%d goals judged, want all %d", len(tab.Goals), len(Goals))
	}
	found := 0
	for _, v := range tab.Goals {
		if w, ok := want[v.Goal]; ok {
			found++
			if v.Verdict != w {
				t.Errorf("%s / %s %s: %s, want %s", v.Subject, v.Peer, v.Metric, v.Verdict, w)
			}
		}
		if (v.Ratio == nil) != (v.Verdict == VerdictNotMeasured) {
			t.Errorf("%s / %s %s: ratio %v with verdict %s", v.Subject, v.Peer, v.Metric, v.Ratio, v.Verdict)
		}
	}
	if found != len(want) {
		t.Errorf("%d of the %d goals looked for are among Goals", found, len(want))
	}
	// 0.9 instructions ratio against a bar of 1.2 below: not met.
	v := judge(Goal{Scenario: "ok_pipelined16", Subject: "weaseldb", Peer: "gnet", Metric: MetricInstructions, Op: "<", Bar: 0.5}, tab.Ratios, tab.Peers, 0)
	if v.Verdict != VerdictNotMet {
		t.Errorf("instructions 0.9 against < 0.5: %s, want not met", v.Verdict)
	}
}
