package runview

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand"
	"regexp"
	"strings"
	"testing"
	"weaseldb/loadtester/result"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// encode records n latencies around base (ns), seeded, and encodes them as
// a result holds a histogram.
func encode(t testing.TB, seed int64, n int, base int64) (string, *hdrhistogram.Histogram) {
	t.Helper()
	h := hdrhistogram.New(1, 60_000_000_000, 3)
	r := rand.New(rand.NewSource(seed))
	for range n {
		v := base + int64(r.ExpFloat64()*float64(base)/4)
		if err := h.RecordValue(v); err != nil {
			t.Fatal(err)
		}
	}
	enc, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		t.Fatal(err)
	}
	return string(enc), h
}

// synthetic is a rate-mode result of n one-second intervals, each with its
// own histogram, a workload of two kinds and a threshold of each verdict.
func synthetic(t testing.TB, n int) *result.Result {
	t.Helper()
	res := &result.Result{Version: result.ResultVersion, Target: "http://127.0.0.1:8080/ok", Instance: "test-1",
		WindowStart: "2026-01-02T03:04:05Z", CPUs: 2, ClockSource: "tsc", RateAsked: 1000,
		Due: 1000 * int64(n), Answered: 1000*int64(n) - 7, Failed: 4, Unfinished: 2, Dropped: 1, LowerBounds: 3,
		DurationS: float64(n), RequestsPerSec: 999.9, ErrorsByKind: map[string]int64{"timeout": 3, "status_5xx": 1},
		StatusCodes: map[string]int64{"200": 1000*int64(n) - 8, "503": 1}, ClientCPUS: 1.5, ClientCPUCores: 0.3,
		ClientCPUFraction: 0.15, BusiestThreadCPU: 0.2, ClientCPUNsPerReq: 1500, ClientBound: true,
		ClientBoundReason: "busiest network thread 97% busy", Config: map[string]any{"connections": 8, "command": "load_tester --rate 1000"},
		Thresholds: []result.ThresholdResult{
			{Threshold: result.Threshold{Expr: "p99<5ms", Metric: "p99", Op: "<", Limit: 5e6}, Measured: 1.2e6, Pass: true},
			{Threshold: result.Threshold{Expr: "errors<=1", Metric: "errors", Op: "<=", Limit: 1}, Measured: 7, Pass: false}}}
	var total *hdrhistogram.Histogram
	res.Histogram, total = encode(t, 1, 5000, 200_000)
	svc, _ := encode(t, 2, 5000, 100_000)
	res.ServiceHistogram = svc
	res.ServiceLatency = &result.Latency{P50: 100_000, P90: 150_000, P99: 300_000, P999: 500_000, Max: 900_000, Mean: 120_000}
	res.Latency = result.Latency{P50: total.ValueAtQuantile(50), P90: total.ValueAtQuantile(90), P99: total.ValueAtQuantile(99),
		P999: total.ValueAtQuantile(99.9), Max: total.Max(), Mean: total.Mean()}
	ivHist, _ := encode(t, 3, 1000, 200_000)
	for i := range n {
		res.Intervals = append(res.Intervals, result.Interval{TS: float64(i + 1), LengthS: 1, Requests: 1000,
			RequestsPerSec: 1000 - float64(i%7), P50NS: 200_000, P99NS: 400_000, Errors: int64(i % 3), Histogram: ivHist})
	}
	for _, k := range []string{"get", "put"} {
		kh, _ := encode(t, 4, 100, 150_000)
		res.Kinds = append(res.Kinds, result.KindResult{Name: k, Method: "GET", Path: "/" + k, Weight: 1, Share: 0.5,
			Due: 500, Answered: 500, Successes: 500, RequestsPerSec: 500, Histogram: kh, StatusCodes: map[string]int64{"200": 500}})
	}
	return res
}

func render(t testing.TB, p *Page, err error) string {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := p.Write(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// offline checks a page fetches nothing: no script, no link, no source.
func offline(t *testing.T, page string) {
	t.Helper()
	for _, bad := range []string{"<script", "<link", " src=", " href=", "@import", "url("} {
		if strings.Contains(page, bad) {
			t.Errorf("page contains %q: it must be self-contained", bad)
		}
	}
}

var chartRE = regexp.MustCompile(`data-chart="([^"]+)"`)

func charts(page string) []string {
	var ids []string
	for _, m := range chartRE.FindAllStringSubmatch(page, -1) {
		ids = append(ids, m[1])
	}
	return ids
}

func TestResultPage(t *testing.T) {
	merged := synthetic(t, 5)
	merged.Instance = "merged"
	merged.Instances = []result.InstanceRow{{Name: "a"}, {Name: "b"}}
	closed := synthetic(t, 3)
	closed.RateAsked, closed.ServiceHistogram, closed.ServiceLatency, closed.Kinds = 0, "", nil, nil
	tests := []struct {
		name   string
		res    *result.Result
		kind   string
		charts []string
		want   []string
	}{
		{"rate mode", synthetic(t, 10), "run",
			[]string{"throughput", "latency-over-time", "spectrum", "histogram", "errors-over-time"},
			[]string{`data-series="service time (from actual send)"`, "Request kinds", "/put", "p99&lt;5ms", `class="fail">FAIL`,
				"busiest network thread 97% busy", "load_tester --rate 1000", "timeout", `data-series="p90"`}},
		{"closed loop", closed, "run",
			[]string{"throughput", "latency-over-time", "spectrum", "histogram", "errors-over-time"},
			[]string{`data-series="latency"`}},
		{"merged", merged, "merged run",
			[]string{"throughput", "latency-over-time", "spectrum", "histogram", "errors-over-time"},
			[]string{"Instances", "<td class=\"l\">b</td>"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := ResultPage(tc.res, []string{"run.json"})
			page := render(t, p, err)
			offline(t, page)
			if p.Kind != tc.kind {
				t.Errorf("kind %q, want %q", p.Kind, tc.kind)
			}
			if got := strings.Join(charts(page), " "); got != strings.Join(tc.charts, " ") {
				t.Errorf("charts %q, want %q", got, tc.charts)
			}
			for _, key := range []struct {
				k string
				v int64
			}{{"due", tc.res.Due}, {"answered", tc.res.Answered}, {"failed", tc.res.Failed}, {"unfinished", tc.res.Unfinished}, {"dropped", tc.res.Dropped}} {
				if cell := fmt.Sprintf(`data-acct="%s">%d<`, key.k, key.v); !strings.Contains(page, cell) {
					t.Errorf("page lacks %s", cell)
				}
			}
			for _, w := range tc.want {
				if !strings.Contains(page, w) {
					t.Errorf("page lacks %q", w)
				}
			}
			if !strings.Contains(page, "<polyline") || !strings.Contains(page, `class="bar"`) {
				t.Error("no line or bar drawn")
			}
		})
	}
}

func TestResultPageIsDeterministic(t *testing.T) {
	res := synthetic(t, 20)
	a := renderResult(t, res)
	b := renderResult(t, res)
	if a != b {
		t.Error("two renderings of one result differ")
	}
}

func renderResult(t testing.TB, res *result.Result) string {
	t.Helper()
	p, err := ResultPage(res, nil)
	return render(t, p, err)
}

// A page for an hour of one-second intervals stays small enough to mail
// and to open at once.
func TestHourLongRunStaysSmall(t *testing.T) {
	page := renderResult(t, synthetic(t, 3600))
	const limit = 3 << 20
	if len(page) > limit {
		t.Errorf("page of a 3600-interval run is %d bytes, want at most %d", len(page), limit)
	}
	t.Logf("3600 intervals: %d bytes", len(page))
}

func TestBadResults(t *testing.T) {
	corrupt := synthetic(t, 2)
	corrupt.Histogram = "HISTFAAAAnotahistogram"
	corruptIv := synthetic(t, 2)
	corruptIv.Intervals[1].Histogram = "HISTFAAAA"
	tests := []struct {
		name string
		res  *result.Result
		want string
	}{
		{"empty", &result.Result{Version: 2}, "empty run"},
		{"corrupt histogram", corrupt, "histogram"},
		{"corrupt interval", corruptIv, "interval 2 histogram"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ResultPage(tc.res, nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one saying %q", err, tc.want)
			}
		})
	}
	if _, err := ResultPage(&result.Result{}, nil); !errors.Is(err, ErrEmpty) {
		t.Errorf("empty run: %v, want ErrEmpty", err)
	}
	if _, err := StepsPage(&result.StepsResult{}, nil); !errors.Is(err, ErrEmpty) {
		t.Errorf("no steps: %v, want ErrEmpty", err)
	}
}

func TestStepsPage(t *testing.T) {
	yes, no := true, false
	step := func(n int, asked, achieved float64, p99 int64, pass *bool) result.Step {
		res := synthetic(t, 2)
		res.RateAsked = asked
		return result.Step{N: n, RateAsked: asked, RateAchieved: achieved, Pass: pass, Due: res.Due, Answered: res.Answered,
			Latency: result.Latency{P50: p99 / 3, P99: p99, P999: 2 * p99}, ServiceLatency: result.Latency{P50: p99 / 4, P99: p99 / 2}, Result: res}
	}
	steps := []result.Step{step(1, 1000, 1000, 1e6, &yes), step(2, 2000, 1990, 2e6, &yes), step(3, 4000, 3000, 90e6, &no)}
	search := &result.Search{Rate: 2000, LastPass: 2000, FirstFail: 4000, Resolution: 1, Certainty: "2000 req/s met it",
		Stopped: result.StopSteps, Trials: []result.Trial{{Rate: 1000, Pass: true}, {Rate: 2000, Pass: true}, {Rate: 4000}}}
	tests := []struct {
		name, kind, marker string
		search             *result.Search
	}{
		{"rate steps", "rate steps", "last pass: 2,000/s asked", nil},
		{"knee search", "knee search", "knee: 2,000/s asked", search},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sr := &result.StepsResult{Kind: result.StepsKind, Version: result.StepsVersion, Target: "http://x/",
				Objectives: []result.Objective{{Percentile: "p99", LimitNs: 5e6}}, Steps: steps, Search: tc.search, Config: map[string]any{}}
			p, err := StepsPage(sr, []string{"steps.json"})
			page := render(t, p, err)
			offline(t, page)
			if p.Kind != tc.kind {
				t.Errorf("kind %q, want %q", p.Kind, tc.kind)
			}
			ids := charts(page)
			if len(ids) != 1+3*5 || ids[0] != "steps-curve" || ids[1] != "step1-throughput" {
				t.Errorf("charts %q: want the curve, then each step's five", ids)
			}
			if !strings.Contains(page, `<line class="marker"`) || !strings.Contains(page, tc.marker) {
				t.Errorf("no knee marked %q", tc.marker)
			}
		})
	}
}

// Errors over time draw a line per kind where the intervals keep their
// kinds, and one line of all errors for a result from before they did.
func TestErrorsOverTimeByKind(t *testing.T) {
	names := func(c Chart) []string {
		var out []string
		for _, s := range c.Series {
			out = append(out, s.Name)
		}
		return out
	}
	byKind := []result.Interval{
		{TS: 1, Errors: 3, ErrorsByKind: map[string]int64{"timeout": 2, "eof": 1}},
		{TS: 2, Errors: 1, ErrorsByKind: map[string]int64{"status_503": 1}},
		{TS: 3},
	}
	c := errorsOverTime("e", byKind)
	if got, want := strings.Join(names(c), ","), "eof,status_503,timeout,unfinished,dropped"; got != want {
		t.Errorf("series %s, want %s", got, want)
	}
	if p := c.Series[2].Points; len(p) != 3 || p[0].Y != 2 || p[1].Y != 0 {
		t.Errorf("timeout's points %+v, want 2, 0, 0", p)
	}
	old := []result.Interval{{TS: 1, Errors: 4}}
	if got := strings.Join(names(errorsOverTime("e", old)), ","); got != "errors,unfinished,dropped" {
		t.Errorf("series of an old result %s", got)
	}
}
