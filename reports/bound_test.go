package reports

import (
	"strings"
	"testing"

	"weaseldb/artifacts"
	"weaseldb/loadtester/result"
)

func TestBoundsRule(t *testing.T) {
	fitted := artifacts.Setup{Title: "fitted setup", IOThreads: 1, WaitStrategy: "WaitIfStageEmpty"}
	seed := artifacts.Setup{Title: "the seed's setup", IOThreads: 8, WaitStrategy: "WaitIfUpstreamIdle"}
	round := func(clientBound bool, serverCores, machineBusy, resolve float64, gomaxprocs int) *Round {
		return &Round{Number: 1, LoadName: "l.json", LoadedName: "s.json", LoadedPrefix: "loaded.",
			Load:   &result.Result{ClientBound: clientBound, ClientCPUFraction: 0.97},
			Loaded: &artifacts.CPUSample{CoreFraction: serverCores, MachineBusyCores: machineBusy, MachineCPUs: 2},
			Sample: &artifacts.ServerSample{StageBusy: map[string]float64{"resolve": resolve}, GOMAXPROCS: gomaxprocs}}
	}
	tests := []struct {
		name  string
		setup artifacts.Setup
		round *Round
		want  []string
	}{
		{"nothing at its limit", fitted, round(false, 0.5, 1.2, 0.3, 1), nil},
		{"the client first", fitted, round(true, 0.5, 1.2, 0.3, 1), []string{"the client"}},
		{"the cores", seed, round(false, 1.4, 1.95, 0.3, 12), []string{"the cores"}},
		{"the resolve stage", fitted, round(false, 0.5, 1.2, 0.95, 1), []string{"the resolve stage"}},
		{"the I/O loop at its one P", fitted, round(false, 0.99, 1.7, 0.25, 1), []string{"the I/O loops"}},
		// A spinning strategy's server has a P per stage: its CPU says nothing of the loops.
		{"no loop bound while spinning", seed, round(false, 0.99, 1.7, 0.25, 1), nil},
		{"everything at once, in the rule's order", fitted, round(true, 0.95, 1.9, 0.92, 1),
			[]string{"the client", "the cores", "the resolve stage", "the I/O loops"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := bounds(tc.round, tc.setup, 2)
			var names []string
			for _, b := range got {
				names = append(names, b.what)
				if b.evidence == nil || b.evidence.artifact == "" {
					t.Errorf("%s has no evidence from an artifact", b.what)
				}
			}
			if strings.Join(names, ",") != strings.Join(tc.want, ",") {
				t.Fatalf("bounds %v, want %v", names, tc.want)
			}
		})
	}
	if b := bounds(&Round{Load: &result.Result{}}, fitted, 2); len(b) != 0 {
		t.Errorf("a round without samples has bounds %v", b)
	}
	if w := boundWords(&Round{Load: &result.Result{}}); !strings.Contains(w, "not determined") {
		t.Errorf("boundWords without a sample: %q", w)
	}
}

func TestSpreadOf(t *testing.T) {
	vals := func(v ...float64) []roundValue {
		var out []roundValue
		for i, x := range v {
			out = append(out, roundValue{round: &Round{Number: i + 1}, value: x, artifact: "r" + string(rune('1'+i)) + ".json", field: "requests_per_sec"})
		}
		return out
	}
	if spreadOf("x", nil, 1, "", 0) != nil {
		t.Fatal("spread of nothing")
	}
	one := spreadOf("x", vals(5), 1, "req/s", 0)
	if one.median.value != 5 || one.median.artifact != "r1.json" || one.n != 1 || one.median.name != "x" {
		t.Errorf("one round: %+v", one.median)
	}
	odd := spreadOf("x", vals(30, 10, 20), 1, "req/s", 0)
	if odd.median.value != 20 || odd.median.artifact != "r3.json" || odd.lo.value != 10 || odd.hi.value != 30 || odd.medianRound.Number != 3 {
		t.Errorf("odd: median %+v lo %+v hi %+v", odd.median, odd.lo, odd.hi)
	}
	even := spreadOf("x", vals(40, 10, 20, 30), 1, "req/s", 0)
	if even.median.value != 25 || even.median.formula == "" || even.medianRound.Number != 3 || even.lo.value != 10 || even.hi.value != 40 {
		t.Errorf("even: median %+v, median round %d", even.median, even.medianRound.Number)
	}
}
