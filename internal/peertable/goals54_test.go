package peertable

import (
	"strings"
	"testing"
)

// Issue 54's goals: weaseldb's own instruction counts judged on the
// figure itself, its CPU per request against nginx and gnet as ratios.
func TestIssue54GoalsJudged(t *testing.T) {
	var samples []Sample
	for round := 1; round <= 3; round++ {
		samples = append(samples,
			load("server", "ok", "weaseldb", round, 130_000, 1, 130_000*6900),
			load("server", "ok", "nginx", round, 117_000, 1, 117_000*8200),
			load("server", "ok_pipelined16", "weaseldb", round, 1_400_000, 1, 1_400_000*600),
			load("server", "ok_pipelined16", "gnet", round, 1_330_000, 1, 1_330_000*545),
		)
	}
	samples = append(samples,
		count(KindInstructions, "server", "ok", "weaseldb", 1000, 1000*3700),
		count(KindInstructions, "server", "ok_pipelined16", "weaseldb", 2048, 2048*1765),
	)
	tab, err := Build(samples, Machine{}, Run{Rounds: 3})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]GoalVerdict{}
	for _, v := range tab.Goals {
		if v.Issue == issue54 {
			got[v.Scenario+" "+v.Peer+" "+v.Metric] = v
		}
	}
	for key, want := range map[string]string{
		"ok  " + MetricInstructions:             VerdictMet,    // 3,700 ≤ 3,750
		"ok_pipelined16  " + MetricInstructions: VerdictNotMet, // 1,765 > 1,400
		"ok nginx " + MetricCPU:                 VerdictMet,    // 6.9/8.2 = 0.84
		"ok_pipelined16 gnet " + MetricCPU:      VerdictNotMet, // 600/545 = 1.10
	} {
		if v, ok := got[key]; !ok || v.Verdict != want {
			t.Errorf("%s: verdict %+v, want %s", key, v, want)
		}
	}
	if s := got["ok  "+MetricInstructions].String(); !strings.Contains(s, "≤ 3750") || strings.Contains(s, ".") {
		t.Errorf("an instruction count's bar reads %q, want a whole count", s)
	}
}
