package gate

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	"weaseldb/gate/cost"
	"weaseldb/gate/result"
	loadresult "weaseldb/loadtester/result"

	"github.com/BurntSushi/toml"
)

// A scenarios file (--scenarios, testdata/gate_scenarios.toml) lists the
// hot paths one gate run judges, each a load_tester load shape with a
// verdict of its own: a change that slows POST /v1/commit by 20% must fail
// the gate even when GET /ok is as fast as before (issue 27).
//
//	[gate]                        # optional: what the flags default to for this file
//	duration = "500ms"
//	warmup = "200ms"
//	budget = "110s"
//
//	[[scenario]]
//	name = "commit"
//	method = "POST"
//	path = "/v1/commit"
//	headers = ["Content-Type: application/json"]
//	body = '{"request_id":"gate-{{uuid}}","operations":[]}'
//	tolerance = 0.05              # optional: this scenario's own
//
//	[[scenario.setup]]            # optional: loads run, unmeasured, on every fresh server first
//	method = "POST"
//	path = "/v1/commit"
//	body = '...'
//	duration = "100ms"
//
// The [gate] table and each scenario are decoded strictly: an unknown key
// is an error naming it, so a typo cannot silently measure something else.

// Scenario is one named load shape with its own verdict.
type Scenario struct {
	Name string `toml:"name" json:"name"`
	// Description is free text for the reader of the table.
	Description string `toml:"description" json:"description,omitempty"`
	result.LoadShape
	// Metric is what is compared: "rps" (requests/sec, the default),
	// "p50" or "p99" (latency, compared as its inverse so that B/A below
	// 1 still means B is slower). A --rate scenario needs a latency: its
	// req/s is the rate asked, however slow the server.
	Metric string `toml:"metric" json:"metric"`
	// Tolerance is this scenario's own (0: the run's --tolerance).
	Tolerance float64 `toml:"tolerance" json:"tolerance"`
	// Setup loads run, in order and unmeasured, on each side's fresh
	// server before its warm-up and before every round's runs: the state
	// the measured load needs (ids a status load asks for).
	Setup []result.SetupLoad `toml:"setup" json:"setup,omitempty"`
	// Cost is how the cost tier loads this scenario, where it differs
	// from the run's --cost-requests and --cost-rate.
	Cost cost.Shape `toml:"cost" json:"cost_load,omitzero"`
}

// costScenario is what the cost tier runs of the scenario.
func (s Scenario) costScenario() cost.Scenario {
	return cost.Scenario{Name: s.Name, LoadShape: s.LoadShape, Setup: s.Setup, Cost: s.Cost}
}

// checkCostShape checks a scenario's own cost-tier load.
func checkCostShape(c cost.Shape) error {
	switch {
	case c.Requests < 0 || (c.Requests > 0 && c.Requests < 10):
		return fmt.Errorf("cost.requests %d: want at least 10, or none for the run's --cost-requests", c.Requests)
	case c.Rate < 0 || math.IsInf(c.Rate, 0) || math.IsNaN(c.Rate):
		return fmt.Errorf("cost.rate %v: want requests/s above 0, or none for the run's --cost-rate", c.Rate)
	}
	return checkLoadArgs("cost.load_args", c.LoadArgs)
}

// ScenarioDefaults is the optional [gate] table: what the run's options
// default to for this file. A flag given on the command line wins.
type ScenarioDefaults struct {
	Rounds      *int             `toml:"rounds"`
	MaxRounds   *int             `toml:"max_rounds"`
	Budget      *result.Duration `toml:"budget"`
	Duration    *result.Duration `toml:"duration"`
	Warmup      *result.Duration `toml:"warmup"`
	WarmupRun   *result.Duration `toml:"warmup_run"`
	Concurrency *int             `toml:"concurrency"`
	Tolerance   *float64         `toml:"tolerance"`
}

// ScenarioFile is a parsed scenarios file.
type ScenarioFile struct {
	Path      string
	Defaults  ScenarioDefaults `toml:"gate"`
	Scenarios []Scenario       `toml:"scenario"`
}

// DefaultSetupDuration is a setup load's length when it names none.
const DefaultSetupDuration = 100 * time.Millisecond

var scenarioName = regexp.MustCompile(`^[a-z0-9][a-z0-9_.-]{0,39}$`)

// ReadScenarios reads and checks a scenarios file; its error is one line
// naming the file and the scenario.
func ReadScenarios(path string) (*ScenarioFile, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--scenarios: %w", err)
	}
	f, err := ParseScenarios(data)
	if err != nil {
		return nil, fmt.Errorf("--scenarios %s: %w", path, err)
	}
	f.Path = path
	return f, nil
}

// ParseScenarios decodes and checks the text of a scenarios file.
func ParseScenarios(data []byte) (*ScenarioFile, error) {
	var f ScenarioFile
	md, err := toml.NewDecoder(bytes.NewReader(data)).Decode(&f)
	if err != nil {
		return nil, fmt.Errorf("invalid TOML: %w", err)
	}
	if undecoded := md.Undecoded(); len(undecoded) > 0 {
		keys := make([]string, len(undecoded))
		for i, k := range undecoded {
			keys[i] = k.String()
		}
		return nil, fmt.Errorf("unknown key %s (allowed: [gate] %s; [[scenario]] %s; [[scenario.setup]] %s)",
			strings.Join(keys, ", "), "rounds, max_rounds, budget, duration, warmup, warmup_run, concurrency, tolerance",
			"name, description, method, path, headers, body, concurrency, pipeline, rate, load_args, metric, tolerance, setup, cost (requests, rate, load_args)",
			"method, path, headers, body, concurrency, pipeline, rate, load_args, duration")
	}
	if err := f.check(); err != nil {
		return nil, err
	}
	return &f, nil
}

// check validates the file and fills in each scenario's defaults that do
// not depend on the run's options (method, metric, a setup's length).
func (f *ScenarioFile) check() error {
	if err := f.Defaults.check(); err != nil {
		return fmt.Errorf("[gate]: %w", err)
	}
	if len(f.Scenarios) == 0 {
		return errors.New("no [[scenario]]: list at least one")
	}
	seen := map[string]bool{}
	for i := range f.Scenarios {
		s := &f.Scenarios[i]
		where := fmt.Sprintf("scenario %d", i+1)
		if s.Name != "" {
			where = fmt.Sprintf("scenario %q", s.Name)
		}
		if err := s.check(); err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
		if seen[s.Name] {
			return fmt.Errorf("%s: the name is used twice", where)
		}
		seen[s.Name] = true
	}
	return nil
}

func (d ScenarioDefaults) check() error {
	for _, c := range []struct {
		name string
		v    *result.Duration
		min  time.Duration
	}{{"budget", d.Budget, 0}, {"duration", d.Duration, time.Millisecond}, {"warmup", d.Warmup, 0}, {"warmup_run", d.WarmupRun, 0}} {
		if c.v != nil && c.v.Duration < c.min {
			return fmt.Errorf("%s %v: want at least %v", c.name, c.v.Duration, c.min)
		}
	}
	if d.Tolerance != nil && !(*d.Tolerance > 0 && *d.Tolerance < 1) {
		return fmt.Errorf("tolerance %v: want a fraction between 0 and 1", *d.Tolerance)
	}
	if d.Concurrency != nil && *d.Concurrency < 1 {
		return fmt.Errorf("concurrency %d: want at least 1", *d.Concurrency)
	}
	// Rounds are checked with the options (Options.Validate), which say why.
	return nil
}

func (s *Scenario) check() error {
	if !scenarioName.MatchString(s.Name) {
		return fmt.Errorf("name %q: want 1-40 characters of a-z, 0-9, '_', '-', '.', starting with a letter or digit", s.Name)
	}
	if err := checkLoad(&s.LoadShape); err != nil {
		return err
	}
	if s.Metric == "" {
		s.Metric = result.MetricRPS
	}
	switch s.Metric {
	case result.MetricRPS:
		if s.Rate > 0 {
			return fmt.Errorf("rate %g with metric %q: an open loop's req/s is the rate asked, however slow the server; compare metric = \"p50\" or \"p99\"", s.Rate, result.MetricRPS)
		}
	case result.MetricP50, result.MetricP99:
	default:
		return fmt.Errorf("metric %q: want %q, %q or %q", s.Metric, result.MetricRPS, result.MetricP50, result.MetricP99)
	}
	if s.Tolerance != 0 && !(s.Tolerance > 0 && s.Tolerance < 1) {
		return fmt.Errorf("tolerance %v: want a fraction between 0 and 1 (0.10 = 10%%), or none for the run's", s.Tolerance)
	}
	if err := checkCostShape(s.Cost); err != nil {
		return err
	}
	for i := range s.Setup {
		u := &s.Setup[i]
		if err := checkLoad(&u.LoadShape); err != nil {
			return fmt.Errorf("setup %d: %w", i+1, err)
		}
		if u.Concurrency == 0 {
			u.Concurrency = 1
		}
		if u.Duration.Duration == 0 {
			u.Duration.Duration = DefaultSetupDuration
		}
		if u.Duration.Duration < time.Millisecond {
			return fmt.Errorf("setup %d: duration %v: want at least 1ms", i+1, u.Duration.Duration)
		}
	}
	return nil
}

// reservedLoadFlags are load_tester flags the gate sets itself: a
// scenario's load_args may not move the target, the run's length or the
// result file from under it.
var reservedLoadFlags = []string{"--unix-socket", "--host", "--port", "--url", "--duration", "--warmup", "--json",
	"--quiet", "--path", "--method", "--header", "--body", "--body-file", "--concurrency", "--pipeline", "--rate",
	"--network-threads", "--start-at", "--max-errors"}

func checkLoad(l *result.LoadShape) error {
	if l.Method == "" {
		l.Method = "GET"
	}
	if l.Method != strings.ToUpper(l.Method) || strings.ContainsAny(l.Method, " \t\r\n") {
		return fmt.Errorf("method %q: want an upper-case HTTP method", l.Method)
	}
	if !strings.HasPrefix(l.Path, "/") || strings.ContainsAny(l.Path, " \t\r\n") {
		return fmt.Errorf("path %q: want a request target starting with / (such as /ok)", l.Path)
	}
	for _, h := range l.Headers {
		name, _, ok := strings.Cut(h, ":")
		if !ok || strings.TrimSpace(name) == "" || strings.ContainsAny(h, "\r\n") {
			return fmt.Errorf("header %q: want \"Name: value\"", h)
		}
	}
	switch {
	case l.Concurrency < 0:
		return fmt.Errorf("concurrency %d: want at least 1 (or none for the run's)", l.Concurrency)
	case l.Pipeline < 0:
		return fmt.Errorf("pipeline %d: want at least 1", l.Pipeline)
	case l.Rate < 0 || math.IsInf(l.Rate, 0) || math.IsNaN(l.Rate):
		return fmt.Errorf("rate %v: want requests/s above 0, or none for a closed loop", l.Rate)
	}
	return checkLoadArgs("load_args", l.LoadArgs)
}

// checkLoadArgs refuses a flag the gate sets itself.
func checkLoadArgs(key string, args []string) error {
	for _, a := range args {
		flag, _, _ := strings.Cut(a, "=")
		flag = "--" + strings.TrimLeft(flag, "-")
		if strings.HasPrefix(a, "-") && slices.Contains(reservedLoadFlags, flag) {
			return fmt.Errorf("%s %q: the gate sets %s itself (use the scenario's own keys)", key, a, flag)
		}
	}
	return nil
}

// Apply sets the options the [gate] table names, except those whose flags
// were given (set says whether a flag was on the command line).
func (d ScenarioDefaults) Apply(o *Options, set func(flag string) bool) {
	if d.Rounds != nil && !set("rounds") {
		o.Rounds = *d.Rounds
	}
	if d.MaxRounds != nil && !set("max-rounds") {
		o.MaxRounds = *d.MaxRounds
	}
	if d.Budget != nil && !set("budget") {
		o.Budget = d.Budget.Duration
	}
	if d.Duration != nil && !set("duration") {
		o.Duration = d.Duration.Duration
	}
	if d.Warmup != nil && !set("warmup") {
		o.Warmup = d.Warmup.Duration
	}
	if d.WarmupRun != nil && !set("warmup-run") {
		o.WarmupRun = d.WarmupRun.Duration
	}
	if d.Concurrency != nil && !set("concurrency") {
		o.Concurrency = *d.Concurrency
	}
	if d.Tolerance != nil && !set("tolerance") {
		o.Tolerance = *d.Tolerance
	}
}

// sample is the number a run contributes for the scenario's metric, higher
// is faster: req/s, or one second over the latency (so that the ratio B/A
// reads the same way for every metric).
func (s Scenario) sample(res loadresult.Result) (float64, error) {
	switch s.Metric {
	case result.MetricP50, result.MetricP99:
		ns := res.Latency.P50
		if s.Metric == result.MetricP99 {
			ns = res.Latency.P99
		}
		if ns <= 0 {
			return 0, fmt.Errorf("load_tester measured no %s latency", s.Metric)
		}
		return 1e9 / float64(ns), nil
	default:
		return res.RequestsPerSec, nil
	}
}

// implicitScenario is the single workload of a run without --scenarios:
// the flags' --path, --concurrency and --load-arg, judged on req/s, the one
// scenario of its result.
func implicitScenario(o Options) Scenario {
	return Scenario{Name: result.ImplicitScenarioName, Metric: result.MetricRPS, Tolerance: o.Tolerance,
		LoadShape: result.LoadShape{Method: "GET", Path: o.Path, Concurrency: o.Concurrency, LoadArgs: o.LoadArgs}}
}

// resolved fills a file scenario's run-dependent defaults from the options.
func (s Scenario) resolved(o Options) Scenario {
	if s.Tolerance == 0 {
		s.Tolerance = o.Tolerance
	}
	if s.Concurrency == 0 {
		s.Concurrency = o.Concurrency
	}
	return s
}

// only is the file's scenarios named in names (all when names is empty),
// in the file's order.
func (f *ScenarioFile) only(names []string) ([]Scenario, error) {
	if len(names) == 0 {
		return f.Scenarios, nil
	}
	var out []Scenario
	for _, n := range names {
		if !slices.ContainsFunc(f.Scenarios, func(s Scenario) bool { return s.Name == n }) {
			all := make([]string, len(f.Scenarios))
			for i, s := range f.Scenarios {
				all[i] = s.Name
			}
			return nil, fmt.Errorf("--only %s: no such scenario in %s (it has %s)", n, f.Path, strings.Join(all, ", "))
		}
	}
	for _, s := range f.Scenarios {
		if slices.Contains(names, s.Name) {
			out = append(out, s)
		}
	}
	return out, nil
}
