package gate

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"weaseldb/gate/launch"
	"weaseldb/gate/result"
	loadresult "weaseldb/loadtester/result"
)

func TestParseScenarios(t *testing.T) {
	const ok = "[[scenario]]\nname = \"ok\"\npath = \"/ok\"\n"
	tests := []struct {
		name string
		text string
		err  string // substring of the one-line error; "" = valid
	}{
		{"minimal", ok, ""},
		{"every key", `
[gate]
rounds = 8
max_rounds = 16
budget = "90s"
duration = "500ms"
warmup = "100ms"
warmup_run = "0s"
concurrency = 32
tolerance = 0.1
[[scenario]]
name = "status.by-id_2"
description = "anything"
method = "GET"
path = "/v1/status?request_id=x"
headers = ["X-A: b"]
body = ""
concurrency = 8
pipeline = 4
rate = 1000
metric = "p99"
tolerance = 0.2
load_args = ["--requests-per-conn", "100"]
[[scenario.setup]]
method = "POST"
path = "/v1/commit"
body = "{}"
concurrency = 2
pipeline = 2
duration = "20ms"
load_args = ["--timeout=2s"]
`, ""},
		{"bad TOML", "[[scenario]\n", "invalid TOML"},
		{"unknown key", ok + "pipelined = 16\n", "unknown key scenario.pipelined (allowed:"},
		{"unknown [gate] key", "[gate]\nrounds_max = 3\n" + ok, "unknown key gate.rounds_max"},
		{"unknown setup key", ok + "[[scenario.setup]]\npath = \"/x\"\nrequests = 1\n", "unknown key scenario.setup.requests"},
		{"no scenario", "[gate]\nrounds = 6\n", "no [[scenario]]"},
		{"no name", "[[scenario]]\npath = \"/ok\"\n", `scenario 1: name ""`},
		{"bad name", "[[scenario]]\nname = \"Has Space\"\npath = \"/ok\"\n", `name "Has Space"`},
		{"duplicate name", ok + ok, `scenario "ok": the name is used twice`},
		{"no path", "[[scenario]]\nname = \"x\"\n", `scenario "x": path ""`},
		{"path with a space", "[[scenario]]\nname = \"x\"\npath = \"/a b\"\n", `path "/a b"`},
		{"lower-case method", ok + "method = \"post\"\n", `method "post": want an upper-case HTTP method`},
		{"bad header", ok + "headers = [\"NoColon\"]\n", `header "NoColon"`},
		{"negative pipeline", ok + "pipeline = -1\n", "pipeline -1"},
		{"negative concurrency", ok + "concurrency = -2\n", "concurrency -2"},
		{"negative rate", ok + "rate = -5.0\n", "rate -5"},
		{"rate judged on req/s", ok + "rate = 1000.0\n", `an open loop's req/s is the rate asked`},
		{"unknown metric", ok + "metric = \"p95\"\n", `metric "p95": want "rps", "p50" or "p99"`},
		{"tolerance out of range", ok + "tolerance = 1.5\n", "tolerance 1.5"},
		{"reserved load arg", ok + "load_args = [\"--duration=5s\"]\n", `load_args "--duration=5s": the gate sets --duration itself`},
		{"reserved load arg, single dash", ok + "load_args = [\"-unix-socket\", \"/x\"]\n", "the gate sets --unix-socket itself"},
		{"setup without a path", ok + "[[scenario.setup]]\nmethod = \"POST\"\n", `scenario "ok": setup 1: path ""`},
		{"setup too short", ok + "[[scenario.setup]]\npath = \"/x\"\nduration = \"10us\"\n", "setup 1: duration 10µs: want at least 1ms"},
		{"setup duration not a duration", ok + "[[scenario.setup]]\npath = \"/x\"\nduration = \"soon\"\n", "want a duration"},
		{"[gate] duration too short", "[gate]\nduration = \"1us\"\n" + ok, "[gate]: duration 1µs"},
		{"[gate] tolerance", "[gate]\ntolerance = 0.0\n" + ok, "[gate]: tolerance 0"},
		{"[gate] concurrency", "[gate]\nconcurrency = 0\n" + ok, "[gate]: concurrency 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := ParseScenarios([]byte(tt.text))
			if tt.err == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				if len(f.Scenarios) == 0 {
					t.Fatal("no scenarios")
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Fatalf("error %v, want one containing %q", err, tt.err)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error is not one line: %q", err)
			}
		})
	}
}

// What a scenario leaves out is filled in: GET, req/s, a setup load of one
// connection for 100 ms; the run's tolerance and concurrency when resolved.
func TestScenarioDefaultsFilled(t *testing.T) {
	f, err := ParseScenarios([]byte("[[scenario]]\nname = \"s\"\npath = \"/v1/status?request_id=x\"\n" +
		"[[scenario.setup]]\nmethod = \"POST\"\npath = \"/v1/commit\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	s := f.Scenarios[0]
	if s.Method != "GET" || s.Metric != result.MetricRPS || s.Tolerance != 0 || s.Concurrency != 0 {
		t.Errorf("scenario %+v", s)
	}
	if u := s.Setup[0]; u.Concurrency != 1 || u.Duration.Duration != DefaultSetupDuration {
		t.Errorf("setup %+v", u)
	}
	o := DefaultOptions()
	o.Tolerance, o.Concurrency = 0.07, 12
	r := s.resolved(o)
	if r.Tolerance != 0.07 || r.Concurrency != 12 {
		t.Errorf("resolved %+v", r)
	}
	s.Tolerance, s.Concurrency = 0.2, 3
	if r := s.resolved(o); r.Tolerance != 0.2 || r.Concurrency != 3 {
		t.Errorf("a scenario's own tolerance and concurrency must win: %+v", r)
	}
}

func TestScenarioDefaultsApply(t *testing.T) {
	f, err := ParseScenarios([]byte("[gate]\nrounds = 8\nmax_rounds = 12\nbudget = \"90s\"\nduration = \"400ms\"\nwarmup = \"100ms\"\n" +
		"warmup_run = \"300ms\"\nconcurrency = 16\ntolerance = 0.08\n[[scenario]]\nname = \"ok\"\npath = \"/ok\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		set  []string
		want func(o Options) bool
	}{
		{"the file's values", nil, func(o Options) bool {
			return o.Rounds == 8 && o.MaxRounds == 12 && o.Budget == 90*time.Second && o.Duration == 400*time.Millisecond &&
				o.Warmup == 100*time.Millisecond && o.WarmupRun == 300*time.Millisecond && o.Concurrency == 16 && o.Tolerance == 0.08
		}},
		{"flags given win", []string{"rounds", "duration", "tolerance", "budget"}, func(o Options) bool {
			return o.Rounds == 10 && o.Duration == time.Second && o.Tolerance == 0.05 && o.Budget == 60*time.Second &&
				o.MaxRounds == 12 && o.Concurrency == 16
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := DefaultOptions()
			f.Defaults.Apply(&o, func(flag string) bool { return slices.Contains(tt.set, flag) })
			if !tt.want(o) {
				t.Errorf("options %+v", o)
			}
		})
	}
}

func TestLoadShapeArgs(t *testing.T) {
	tests := []struct {
		shape result.LoadShape
		args  string
		str   string
	}{
		{result.LoadShape{Method: "GET", Path: "/ok", Concurrency: 64}, "", "GET /ok, 64 conns"},
		{result.LoadShape{Path: "/ok", Concurrency: 8, Pipeline: 16}, "--pipeline 16", "GET /ok, 8 conns, 16 deep"},
		{result.LoadShape{Method: "POST", Path: "/v1/commit", Concurrency: 4, Headers: []string{"Content-Type: application/json"},
			Body: `{"request_id":"gate-{{uuid}}"}`, LoadArgs: []string{"--timeout=2s"}},
			`--method POST --header Content-Type: application/json --body {"request_id":"gate-{{uuid}}"} --timeout=2s`,
			"POST /v1/commit, 4 conns, --timeout=2s"},
		{result.LoadShape{Path: "/ok", Concurrency: 2, Rate: 2500, Pipeline: 1}, "--rate 2500", "GET /ok, 2 conns, 2500 req/s"},
	}
	for _, tt := range tests {
		if got := strings.Join(launch.ShapeArgs(tt.shape), " "); got != tt.args {
			t.Errorf("args %q, want %q", got, tt.args)
		}
		if got := tt.shape.String(); got != tt.str {
			t.Errorf("String %q, want %q", got, tt.str)
		}
	}
}

func TestScenarioSample(t *testing.T) {
	res := loadresult.Result{RequestsPerSec: 1234, Latency: loadresult.Latency{P50: 250_000, P99: 2_000_000}}
	tests := []struct {
		metric string
		want   float64
		text   string
	}{
		{result.MetricRPS, 1234, "1,234"},
		{result.MetricP50, 4000, "p50 250.0 µs"},
		{result.MetricP99, 500, "p99 2000.0 µs"},
	}
	for _, tt := range tests {
		got, err := Scenario{Metric: tt.metric}.sample(res)
		if err != nil || got != tt.want {
			t.Errorf("%s: %v, %v; want %v", tt.metric, got, err, tt.want)
		}
		if s := result.FormatSample(tt.metric, got); s != tt.text {
			t.Errorf("%s: formatted %q, want %q", tt.metric, s, tt.text)
		}
	}
	if _, err := (Scenario{Metric: result.MetricP50}).sample(loadresult.Result{RequestsPerSec: 5}); err == nil {
		t.Error("a latency metric without a latency must be an error")
	}
}

// The shipped file lists every hot path the issue asks for: /ok
// unpipelined and 16 deep, commits with a fresh request id each, and a
// status of an id its setup committed.
func TestShippedScenariosFile(t *testing.T) {
	f, err := ReadScenarios(filepath.Join("..", "testdata", "gate_scenarios.toml"))
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]Scenario{}
	for _, s := range f.Scenarios {
		byName[s.Name] = s
	}
	if s := byName["ok"]; s.Path != "/ok" || s.Method != "GET" || s.Pipeline > 1 {
		t.Errorf("ok: %+v", s)
	}
	if s := byName["ok_pipelined"]; s.Path != "/ok" || s.Pipeline != 16 {
		t.Errorf("ok_pipelined: %+v", s)
	}
	commit := byName["commit"]
	if commit.Method != "POST" || commit.Path != "/v1/commit" || !strings.Contains(commit.Body, `"request_id":"gate-{{uuid}}"`) {
		t.Errorf("commit: %+v", commit)
	}
	status := byName["status"]
	id, ok := strings.CutPrefix(status.Path, "/v1/status?request_id=")
	if !ok || len(status.Setup) == 0 || !strings.Contains(status.Setup[0].Body, `"request_id":"`+id+`"`) ||
		status.Setup[0].Method != "POST" || status.Setup[0].Path != "/v1/commit" {
		t.Errorf("status must ask for an id its first setup load commits: %+v", status)
	}
	// commit.min_request_id_length is 20 by default: shorter ids are refused.
	if len(id) < 20 || len("gate-")+36 < 20 {
		t.Errorf("request id %q is shorter than the server's minimum of 20", id)
	}
	o := DefaultOptions()
	f.Defaults.Apply(&o, func(string) bool { return false })
	o.A = "x"
	if err := o.Validate(); err != nil {
		t.Errorf("the file's [gate] values: %v", err)
	}
	// Four scenarios: at most 2 minutes for the budget plus the last
	// rounds it allows to start.
	if o.Budget <= 0 || o.Budget > 115*time.Second || o.Duration > time.Second {
		t.Errorf("the file's budget %v and duration %v do not keep a run under 2 minutes", o.Budget, o.Duration)
	}
}
