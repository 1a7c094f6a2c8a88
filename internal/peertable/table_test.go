package peertable

import (
	"strings"
	"testing"
)

// Two rounds of two servers 16 deep: the medians, each round's ratio and
// the counts' ratios.
func fixture() []Sample {
	return []Sample{
		load("server", "ok_pipelined16", "weaseldb", 1, 1_000_000, 1, 2e9, 1000),
		withSys(load("server", "ok_pipelined16", "gnet", 1, 800_000, 1, 2e9, 800), 1.5e9),
		load("server", "ok_pipelined16", "weaseldb", 2, 1_200_000, 1, 3e9, 1200),
		withSys(load("server", "ok_pipelined16", "gnet", 2, 1_000_000, 1, 2e9, 500), 1.6e9),
		load("server", "ok_pipelined16", "weaseldb", 3, 900_000, 1, 2e9, 900),
		withSys(load("server", "ok_pipelined16", "gnet", 3, 900_000, 1, 1.8e9, 900), 1.35e9),
		withAll(count(KindInstructions, "server", "ok_pipelined16", "weaseldb", 2048, 2048*900), 2048*1500),
		count(KindInstructions, "server", "ok_pipelined16", "gnet", 2048, 2048*1000),
		count(KindSyscalls, "server", "ok_pipelined16", "gnet", 100, 25),
		{Kind: KindSkip, Side: "server", Scenario: "ok_pipelined16", Peer: "weaseldb", Metric: MetricSyscalls, Note: "strace not installed"},
		{Kind: KindSkip, Side: "client", Scenario: "open_loop", Peer: "wrk2", Note: "wrk2 not installed"},
		load("client", "open_loop", "load_tester", 1, 50_000, 1, 1e9),
	}
}

func TestBuildPeers(t *testing.T) {
	tab, err := Build(fixture(), Machine{}, Run{Rounds: 3})
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]PeerEntry{}
	for _, p := range tab.Peers {
		byName[p.Scenario+"/"+p.Peer] = p
	}
	for _, c := range []struct {
		key                     string
		rps, cpu, sw, instr, sc *float64
		skipped                 string
	}{
		{"ok_pipelined16/weaseldb", ptr(1_000_000), ptr(2e9 / 900_000), ptr(0.001), ptr(900), nil, ""},
		{"ok_pipelined16/gnet", ptr(900_000), ptr(2000), ptr(0.001), ptr(1000), ptr(0.25), ""},
		{"open_loop/load_tester", ptr(50_000), ptr(20_000), nil, nil, nil, ""},
		{"open_loop/wrk2", nil, nil, nil, nil, nil, "wrk2 not installed"},
	} {
		p, ok := byName[c.key]
		if !ok {
			t.Errorf("%s: missing", c.key)
			continue
		}
		for _, f := range []struct {
			name      string
			got, want *float64
		}{
			{"requests_per_sec", p.RequestsPerSec, c.rps}, {"cpu_ns_per_request", p.CPUNsPerRequest, c.cpu},
			{"switches", p.SwitchesPerRequest, c.sw}, {"instructions", p.InstructionsPerRequest, c.instr},
			{"syscalls", p.SyscallsPerRequest, c.sc},
		} {
			if (f.got == nil) != (f.want == nil) || (f.got != nil && !near(*f.got, *f.want)) {
				t.Errorf("%s %s = %v, want %v", c.key, f.name, deref(f.got), deref(f.want))
			}
		}
		if p.Skipped != c.skipped {
			t.Errorf("%s skipped = %q, want %q", c.key, p.Skipped, c.skipped)
		}
	}
	if u := byName["ok_pipelined16/weaseldb"].InstructionsUnfilteredPerRequest; u == nil || *u != 1500 {
		t.Errorf("weaseldb unfiltered instructions = %v, want 1500", deref(u))
	}
	if u := byName["ok_pipelined16/gnet"].InstructionsUnfilteredPerRequest; u != nil {
		t.Errorf("gnet unfiltered instructions = %v, want none (not given)", *u)
	}
	if n := byName["ok_pipelined16/weaseldb"].Notes; len(n) != 1 || !strings.Contains(n[0], "strace not installed") {
		t.Errorf("weaseldb notes = %v, want the syscalls skip", n)
	}
}

func deref(x *float64) any {
	if x == nil {
		return nil
	}
	return *x
}

func TestBuildRatios(t *testing.T) {
	tab, err := Build(fixture(), Machine{}, Run{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		metric   string
		perRound []float64
		value    float64
	}{
		// rounds: 1.25, 1.2, 1.0 -> median 1.2 (the ratio of medians
		// would be 1.0/0.9 = 1.11: per-round pairs are what count).
		{MetricRPS, []float64{1.25, 1.2, 1.0}, 1.2},
		{MetricCPU, []float64{0.8, 1.25, 1.0 / 0.9}, 1.0 / 0.9},
		{MetricInstructions, nil, 0.9},
	} {
		r, ok := findRatio(tab.Ratios, "ok_pipelined16", "weaseldb", "gnet", c.metric)
		if !ok {
			t.Errorf("%s: no ratio", c.metric)
			continue
		}
		if !near(r.Value, c.value) || len(r.PerRound) != len(c.perRound) {
			t.Errorf("%s = %v %v, want %v %v", c.metric, r.Value, r.PerRound, c.value, c.perRound)
		}
		for i := range c.perRound {
			if i < len(r.PerRound) && !near(r.PerRound[i], c.perRound[i]) {
				t.Errorf("%s round %d = %v, want %v", c.metric, i+1, r.PerRound[i], c.perRound[i])
			}
		}
	}
	if _, ok := findRatio(tab.Ratios, "ok_pipelined16", "gnet", "weaseldb", MetricRPS); ok {
		t.Error("gnet is no subject: no gnet / weaseldb ratio")
	}
	if _, ok := findRatio(tab.Ratios, "ok_pipelined16", "weaseldb", "gnet", MetricSyscalls); ok {
		t.Error("weaseldb's syscalls were not counted: no ratio")
	}
}

func findRatio(rs []Ratio, scenario, subject, peer, metric string) (Ratio, bool) {
	for _, r := range rs {
		if r.Scenario == scenario && r.Subject == subject && r.Peer == peer && r.Metric == metric {
			return r, true
		}
	}
	return Ratio{}, false
}

// Peers come out in one order whatever order the rounds ran them in, and
// of two subjects only the first is divided by the second.
func TestBuildOrderAndSubjectPairs(t *testing.T) {
	var ss []Sample
	for i, peer := range []string{"zeta", "nginx", "weaseldb_fitted", "gnet", "weaseldb"} {
		ss = append(ss, load("server", "ok", peer, 1, float64(1000*(i+1)), 1, 1e6))
	}
	tab, err := Build(ss, Machine{}, Run{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range tab.Peers {
		got = append(got, p.Peer)
	}
	if want := "weaseldb weaseldb_fitted nginx gnet zeta"; strings.Join(got, " ") != want {
		t.Errorf("order %v, want %s", got, want)
	}
	if _, ok := findRatio(tab.Ratios, "ok", "weaseldb", "weaseldb_fitted", MetricRPS); !ok {
		t.Error("no weaseldb / weaseldb_fitted")
	}
	if _, ok := findRatio(tab.Ratios, "ok", "weaseldb_fitted", "weaseldb", MetricRPS); ok {
		t.Error("weaseldb_fitted / weaseldb repeats weaseldb / weaseldb_fitted")
	}
	if _, ok := findRatio(tab.Ratios, "ok", "weaseldb_fitted", "nginx", MetricRPS); !ok {
		t.Error("no weaseldb_fitted / nginx")
	}
}

func TestBuildRejectsUnknownScenario(t *testing.T) {
	_, err := Build([]Sample{load("server", "okk", "nginx", 1, 1, 1, 1)}, Machine{}, Run{})
	if err == nil || !strings.Contains(err.Error(), "unknown scenario server/okk") {
		t.Errorf("err = %v, want the unknown scenario named", err)
	}
}

func TestReadSamples(t *testing.T) {
	for _, c := range []struct {
		name, in, err string
		n             int
	}{
		{"two lines and a blank", `{"kind":"load","side":"server","scenario":"ok","peer":"nginx","round":1,"requests":10,"seconds":1,"cpu_ns":5}` +
			"\n\n" + `{"kind":"skip","side":"client","scenario":"open_loop","peer":"wrk2","note":"wrk2 not installed"}`, "", 2},
		{"bad json", "{", "line 1", 0},
		{"no requests", `{"kind":"instructions","side":"server","scenario":"ok","peer":"gnet","count":5}`, "no requests", 0},
		{"skip without reason", `{"kind":"skip","side":"server","scenario":"ok","peer":"gnet"}`, "no reason", 0},
		{"unknown kind", `{"kind":"x","side":"server","scenario":"ok","peer":"gnet"}`, "unknown kind", 0},
		{"no peer", `{"kind":"load","side":"server","scenario":"ok","requests":1}`, "required", 0},
	} {
		got, err := ReadSamples(strings.NewReader(c.in))
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: err = %v, want %q", c.name, err, c.err)
			}
			continue
		}
		if err != nil || len(got) != c.n {
			t.Errorf("%s: %d samples, err %v; want %d", c.name, len(got), err, c.n)
		}
	}
}
