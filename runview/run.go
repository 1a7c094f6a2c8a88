package runview

import (
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"sort"

	"weaseldb/internal/numfmt"
	"weaseldb/loadtester/result"
)

// ErrEmpty is a result with nothing measured: no request due or sent and
// no interval. There is nothing to draw.
var ErrEmpty = errors.New("an empty run: no request was due or sent in its measured window")

// Empty tells whether res measured nothing (ErrEmpty).
func Empty(res *result.Result) bool {
	return res.Due == 0 && res.Requests == 0 && len(res.Intervals) == 0
}

// runView is what the page shows of one run (a plain run, a merged one, or
// one step), every number as the result holds it.
type runView struct {
	ID          string // prefix of its charts' ids
	Target      string
	Instance    string
	WindowStart string
	CPUs        int
	Machine     string
	ClockSource string
	Protocol    string
	TLS         *result.TLSInfo
	DurationS   string
	RPS         string
	RateAsked   string
	Interrupted bool
	Accounting  []acctRow
	Warmup      *result.Accounting
	LowerBounds int64
	Latencies   []latencyRow
	Charts      []template.HTML
	ErrorKinds  []countRow
	Statuses    []countRow
	Kinds       []kindRow
	Stages      []stageRow
	StagesConns bool // the stages ramp connections (--concurrency-stages), not a rate
	Checks      []checkRow
	Conns       connView
	Verdict     verdictView
	Thresholds  []thresholdRow
	CPU         cpuView
	Instances   []result.InstanceRow
	Warnings    []string
	Config      string // the config, indented JSON
	Command     string // from the config, when recorded
}

// acctRow is one line of the accounting; Key is its JSON name, which the
// page carries (data-acct) so that a reader or a test can find it.
type acctRow struct {
	Key, Label string
	Value      int64
}

// latencyRow is one latency's percentiles, printed.
type latencyRow struct {
	Name                              string
	P50, P90, P99, P999, Max, MeanStr string
}

// countRow is a name and its count (errors by kind, statuses).
type countRow struct {
	Name  string
	Count int64
}

// kindRow is a workload kind's line of the per-kind table.
type kindRow struct {
	result.KindResult
	ShareStr, RPS string
	Lat, Svc      latencyRow
	HasSvc        bool
	Failed        *latencyRow // the kind's failed requests that got a response (nil: none)
}

// thresholdRow is a threshold and its verdict, printed.
type thresholdRow struct {
	Expr, Measured string
	Pass           bool
	Reason         string // why it failed with nothing to judge
}

// cpuView is the client's CPU and whether it bound the run.
type cpuView struct {
	Seconds, Cores, Fraction, Busiest, NsPerReq string
	Bound                                       bool
	Reason                                      string
	// Behind: the client sent late while a connection was free (not a
	// busy client: its own finding), with its reason.
	Behind       bool
	BehindReason string
}

// newRunView builds the view of res; id prefixes its charts' ids.
func newRunView(id string, res *result.Result) (*runView, error) {
	if Empty(res) {
		return nil, ErrEmpty
	}
	v := &runView{ID: id, Target: res.Target, Instance: res.Instance, WindowStart: res.WindowStart, CPUs: res.CPUs, Machine: res.Machine,
		ClockSource: res.ClockSource, Protocol: res.Protocol, TLS: res.TLS, DurationS: numfmt.Format(res.DurationS, 2),
		RPS: numfmt.Format(res.RequestsPerSec, 0), Interrupted: res.Interrupted, Warmup: res.Warmup,
		LowerBounds: res.LowerBounds, Instances: res.Instances, Warnings: res.Warnings,
		ErrorKinds: countRows(res.ErrorsByKind), Statuses: countRows(res.StatusCodes), CPU: cpuOf(res)}
	if res.RateAsked > 0 {
		v.RateAsked = numfmt.Format(res.RateAsked, 0)
	}
	v.Accounting = []acctRow{{"due", "due", res.Due}, {"answered", "answered", res.Answered}, {"failed", "failed", res.Failed},
		{"unfinished", "unfinished", res.Unfinished}, {"dropped", "dropped", res.Dropped}}
	v.Latencies = latencyRows(res)
	for _, k := range res.Kinds {
		v.Kinds = append(v.Kinds, kindRowOf(k))
	}
	v.Stages, v.Checks, v.Conns, v.Verdict = stageRows(res.Stages), checkRows(res.Checks), connOf(res), verdictOf(res)
	v.StagesConns = len(res.Stages) > 0 && res.Stages[0].Connections
	v.Thresholds = thresholdRowsOf(res.Thresholds)
	v.Config, v.Command = configOf(res.Config)
	if res.Command != "" {
		v.Command = res.Command
	}
	var err error
	if v.Charts, err = runCharts(id, res); err != nil {
		return nil, err
	}
	return v, nil
}

// runCharts draws the run's figures in the page's order.
func runCharts(id string, res *result.Result) ([]template.HTML, error) {
	lat, err := latencyOverTime(id+"latency-over-time", res.Intervals)
	if err != nil {
		return nil, err
	}
	out := []template.HTML{throughputChart(id+"throughput", res.Intervals).SVG(), lat.SVG()}
	h, err := decodeHist(res.Histogram)
	if err != nil {
		return nil, fmt.Errorf("histogram: %w", err)
	}
	svc, err := decodeHist(res.ServiceHistogram)
	if err != nil {
		return nil, fmt.Errorf("service_histogram: %w", err)
	}
	if h != nil && h.TotalCount() > 0 {
		name := "latency"
		if res.RateAsked > 0 {
			name = "corrected (from intended send)"
		}
		hists := []namedHist{{name, h}}
		if svc != nil && svc.TotalCount() > 0 {
			hists = append(hists, namedHist{"service time (from actual send)", svc})
		}
		out = append(out, spectrumChart(id+"spectrum", hists).SVG(), histogramChart(id+"histogram", h).SVG())
	}
	return append(out, errorsOverTime(id+"errors-over-time", res.Intervals).SVG()), nil
}

func latencyRows(res *result.Result) []latencyRow {
	name := "latency"
	if res.RateAsked > 0 {
		name = "corrected (from intended send)"
	}
	rows := []latencyRow{latencyRowOf(name, res.Latency)}
	if s := res.ServiceLatency; s != nil {
		rows = append(rows, latencyRowOf("service time (from actual send)", *s))
	}
	if f := res.FailedLatency; f != nil {
		rows = append(rows, latencyRowOf("failed (a response a check refused)", *f))
	}
	if t := res.TLS; t != nil && t.Handshakes > 0 {
		rows = append(rows, latencyRowOf("TLS handshake", t.Handshake))
	}
	return rows
}

func latencyRowOf(name string, l result.Latency) latencyRow {
	f := func(ns int64) string { return numfmt.Latency(ns) }
	return latencyRow{name, f(l.P50), f(l.P90), f(l.P99), f(l.P999), f(l.Max), f(int64(l.Mean))}
}

func kindRowOf(k result.KindResult) kindRow {
	r := kindRow{KindResult: k, ShareStr: numfmt.Format(100*k.Share, 1) + "%", RPS: numfmt.Format(k.RequestsPerSec, 0),
		Lat: latencyRowOf(k.Name, k.Latency)}
	if k.ServiceLatency != nil {
		r.Svc, r.HasSvc = latencyRowOf(k.Name, *k.ServiceLatency), true
	}
	if f := k.FailedLatency; f != nil {
		l := latencyRowOf(k.Name, *f)
		r.Failed = &l
	}
	return r
}

// countRows sorts a map of counts by name, so the page is the same every time.
func countRows(m map[string]int64) []countRow {
	rows := make([]countRow, 0, len(m))
	for k, n := range m {
		rows = append(rows, countRow{k, n})
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].Name < rows[j].Name })
	return rows
}

func cpuOf(res *result.Result) cpuView {
	return cpuView{Seconds: numfmt.Format(res.ClientCPUS, 2), Cores: numfmt.Format(res.ClientCPUCores, 2),
		Fraction: numfmt.Format(100*res.ClientCPUFraction, 0) + "%", Busiest: numfmt.Format(100*res.BusiestThreadCPU, 0) + "%",
		NsPerReq: numfmt.Format(res.ClientCPUNsPerReq, 0), Bound: res.ClientBound, Reason: res.ClientBoundReason,
		Behind: res.BehindSchedule, BehindReason: res.BehindScheduleReason}
}

// configOf is the config as indented JSON, and the command line when the
// config recorded one.
func configOf(cfg any) (string, string) {
	b, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return fmt.Sprintf("(config not printable: %v)", err), ""
	}
	cmd := ""
	if m, ok := cfg.(map[string]any); ok {
		cmd, _ = m["command"].(string)
	}
	return string(b), cmd
}
