// Package result is the gate's result schema: what a run found (Result,
// one ScenarioResult per scenario, each tier's judgement), the load shape
// and settings it records, and how a sample of each metric reads. It is
// the bottom of the gate, as loadtester/result is of the load tester: the
// engine (package gate) fills it in, the renderers and the history read
// it, and it imports none of them.
package result

import (
	"weaseldb/gate/stats"
	"weaseldb/gate/verdict"
)

// The schema: what cmd/gate prints, writes as JSON
// (--json) and as markdown (--markdown), and what gate record reads back.
// Every run has this one shape: a run of one workload (no --scenarios) is
// a run of one scenario, named ImplicitScenarioName.

// ResultVersion is the schema version of the gate's --json output. 4: one
// schema for every mode (the one-workload run's judgement is its one
// scenario's), baseline_file beside scenarios_file. 3 was the scenarios
// run's, 2 the one workload's.
const ResultVersion = 4

// ImplicitScenarioName names the one scenario of a run without --scenarios.
const ImplicitScenarioName = "default"

// Mode is what a gate run compares with what (Result.Mode, as the JSON
// writes it).
type Mode string

// The modes.
const (
	ModeAB             Mode = "ab"              // two builds in one interleaved run (--a or --a-ref)
	ModeBaseline       Mode = "baseline"        // one build against a recorded baseline
	ModeUpdateBaseline Mode = "update-baseline" // one build's runs recorded as the baseline
	ModeScenarios      Mode = "scenarios"       // a scenarios file: each scenario measured as in ModeAB
)

// Result is what a gate run found: a judgement per scenario (one, without
// --scenarios), and the run's verdict, the worst of theirs.
type Result struct {
	Version          int  `json:"version"`
	Mode             Mode `json:"mode"`
	verdict.Decision `json:"decision"`
	ExitCode         int `json:"exit_code"`
	// DecidedBy is the scenario whose verdict is the run's (scenarios
	// mode): the first (in the file's order) with the worst verdict; when
	// every scenario passed, the closest call (the lowest ratio). Empty
	// without --scenarios, and when the run failed before any scenario was
	// measured.
	DecidedBy string `json:"decided_by,omitempty"`
	File      string `json:"scenarios_file,omitempty"`
	// Baseline is the baseline file read (ModeBaseline) or written
	// (ModeUpdateBaseline).
	Baseline   string           `json:"baseline_file,omitempty"`
	A          string           `json:"a"` // the binaries, as the sides name them (A: the baseline's, in baseline mode)
	B          string           `json:"b"`
	Scenarios  []ScenarioResult `json:"scenarios"`
	Rounds     int              `json:"rounds"` // the most rounds a scenario measured
	RoundsPlan RoundsPlan       `json:"rounds_plan"`
	Settings   Settings         `json:"settings"`
	Machine    Machine          `json:"machine"`
	Warnings   []string         `json:"warnings,omitempty"`
	Command    string           `json:"command,omitempty"`
	ElapsedS   float64          `json:"elapsed_s"`
}

// ScenarioResult is one scenario's load and judgement.
type ScenarioResult struct {
	Name        string      `json:"name"`
	Description string      `json:"description,omitempty"`
	Metric      string      `json:"metric"`
	Load        LoadShape   `json:"load"`
	Setup       []SetupLoad `json:"setup,omitempty"`
	// Tiers are the tiers this scenario was judged by (TierTime, TierCost).
	Tiers []string `json:"tiers"`
	// Judgement is the time tier's (empty when it did not run).
	Judgement
	// Cost is the cost tier's judgement (nil when it did not run).
	Cost *CostJudgement `json:"cost,omitempty"`
}

// Judgement is what the time tier measured and decided about one scenario.
type Judgement struct {
	verdict.Decision `json:"decision"`
	ExitCode         int            `json:"exit_code"` // the time tier's decision's
	A                Side           `json:"a"`
	B                Side           `json:"b"`
	CI               stats.RatioCI  `json:"ratio"`
	Rank             stats.RankTest `json:"mann_whitney"`
	// RoundRatios are B/A per round (A/B mode), the sample the interval is
	// built from; RatioSpread is their median absolute deviation over
	// their median, the round-to-round noise of the pair.
	RoundRatios []float64  `json:"round_ratios,omitempty"`
	RatioSpread float64    `json:"round_ratio_spread,omitempty"`
	Policy      PolicyJSON `json:"policy"`
	Rounds      int        `json:"rounds"` // rounds measured
	RoundsPlan  RoundsPlan `json:"rounds_plan"`
	StopReason  string     `json:"stop_reason"` // one of the Stop* constants
	StopDetail  string     `json:"stop_detail"`
	// Looks are the interim verdicts the rounds were stopped or extended on.
	Looks []Look `json:"looks,omitempty"`
	// CPU is the server's CPU per request over the measured windows,
	// judged beside req/s (A/B mode; nil when fewer than 3 rounds had it).
	CPU      *CPUJudgement     `json:"server_cpu_per_request,omitempty"`
	Runs     []RunRecord       `json:"runs"`
	Problems []verdict.Problem `json:"problems,omitempty"`
	Warnings []string          `json:"warnings,omitempty"`
}

// RunRecord is one measured load_tester run.
type RunRecord struct {
	Round          int     `json:"round"`
	Side           string  `json:"side"`
	RequestsPerSec float64 `json:"requests_per_sec"`
	Requests       int64   `json:"requests"`
	Errors         int64   `json:"errors"`
	// Unfinished and Dropped are due requests that got no answer (sent,
	// still unanswered after load_tester's drain) or were never sent: a
	// run with either is not a clean sample of the server's speed.
	Unfinished     int64   `json:"unfinished"`
	Dropped        int64   `json:"dropped"`
	ClientBound    bool    `json:"client_bound"`
	ClientBoundWhy string  `json:"client_bound_reason,omitempty"`
	ClientCPU      float64 `json:"client_cpu_fraction"`
	// ServerCPU is the cores the measured server used over the whole
	// load_tester run (warm-up included), from the kernel's accounting.
	ServerCPU float64 `json:"server_cpu"`
	// ServerCPUWindow and ServerCPUNSPerRequest are the cores it used and
	// its CPU per request over load_tester's measured window alone
	// (cpuTrace); 0 where the window could not be read.
	ServerCPUWindow       float64 `json:"server_cpu_window,omitempty"`
	ServerCPUNSPerRequest float64 `json:"server_cpu_ns_per_request,omitempty"`
	ClientCPUS            float64 `json:"client_cpu_s"`
	// ServerSaturated: the server was pinned and used at least
	// saturatedServerCPU of every CPU it had. A client-bound run of a
	// saturated server still measures the server (both ends were at their
	// limit), so it is not counted as client-bound.
	ServerSaturated bool `json:"server_saturated,omitempty"`
	// OtherServerCPU is the CPU (in cores) the server not being measured
	// used during this run: it should idle at ~0, or it stole from this one.
	OtherServerCPU float64 `json:"other_server_cpu,omitempty"`
	// The run's latency (load_tester's latency_ns; in rate mode from each
	// request's intended send time).
	P50NS int64 `json:"p50_ns,omitempty"`
	P99NS int64 `json:"p99_ns,omitempty"`
}

// Side summarises one contender (in baseline mode, A is the baseline file).
type Side struct {
	Name             string    `json:"name"`
	Binary           string    `json:"binary"`
	Target           string    `json:"target,omitempty"`
	SamplesRPS       []float64 `json:"samples_rps"`
	MedianRPS        float64   `json:"median_rps"`
	Spread           float64   `json:"spread"`
	ClientBoundRuns  int       `json:"client_bound_runs"`
	ErrorRuns        int       `json:"error_runs"`
	UncleanRuns      int       `json:"unclean_runs"`
	MaxOtherIdleCPU  float64   `json:"max_other_server_cpu,omitempty"`
	FromBaselineFile bool      `json:"from_baseline_file,omitempty"`
	// Metric is set when the samples are not req/s: "p50" or "p99", and
	// each sample is then 1e9 over that latency in ns (higher is faster,
	// so B/A reads as for req/s).
	Metric string `json:"metric,omitempty"`
}

// PolicyJSON records the thresholds a verdict was judged against.
type PolicyJSON struct {
	Tolerance float64 `json:"tolerance"`
	Floor     float64 `json:"fail_below_ratio"`
	PassFloor float64 `json:"pass_needs_ci_low_at_least"`
	NoiseOK   bool    `json:"noise_ok"`
	// InterimLevel is the interval's level at looks after which more
	// rounds could follow; the last look uses the ratio's ci_level.
	InterimLevel float64 `json:"interim_ci_level"`
	// MaxClientBound is the share of a side's runs that may be client-bound
	// before it is not judged (0 when --allow-client-bound).
	MaxClientBound float64 `json:"max_client_bound_fraction"`
}

// RoundsPlan is what the options allowed: rounds before the first look, the
// cap, and the measuring time budget.
type RoundsPlan struct {
	Initial int     `json:"initial"`
	Max     int     `json:"max"`
	BudgetS float64 `json:"budget_s,omitempty"`
	// Order and OrderSeed say how A and B took turns (Options.Order); the
	// seed reproduces a random order.
	Order     string `json:"order,omitempty"`
	OrderSeed uint64 `json:"order_seed,omitempty"`
}

// Look is one interim verdict: after Rounds rounds, the ratio and interval
// and what the rule said.
type Look struct {
	Rounds int     `json:"rounds"`
	Level  float64 `json:"ci_level"`
	Ratio  float64 `json:"ratio"`
	Low    float64 `json:"ci_low"`
	High   float64 `json:"ci_high"`
	Reason string  `json:"reason_code"`
}

// CPUJudgement is the time tier's judgement of server CPU per request.
type CPUJudgement struct {
	// SamplesA and SamplesB are each round's server CPU nanoseconds per
	// request over the measured window (NaN where it could not be read).
	SamplesA []float64 `json:"samples_a_ns_per_request"`
	SamplesB []float64 `json:"samples_b_ns_per_request"`
	MedianA  float64   `json:"median_a_ns_per_request"`
	MedianB  float64   `json:"median_b_ns_per_request"`
	// CI is B/A of requests per CPU second (A's CPU per request over
	// B's), so that below 1 means B is dearer, as for req/s.
	CI stats.RatioCI `json:"ratio"`
	verdict.Decision
}
