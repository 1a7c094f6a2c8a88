package runview

import (
	"errors"
	"strings"
	"testing"

	"weaseldb/loadtester/result"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// intervalsRun is a run of n one-second intervals at about rps req/s
// (wobbling by ±1%) and a p99 of p99 ns.
func intervalsRun(name string, n int, rps float64, p99 int64) CompareRun {
	res := &result.Result{Version: result.ResultVersion, Target: "http://127.0.0.1:8080/ok", Instance: name,
		DurationS: float64(n), RequestsPerSec: rps, Due: int64(rps) * int64(n), Answered: int64(rps) * int64(n),
		Latency: result.Latency{P50: p99 / 2, P99: p99, P999: p99 * 2, Max: p99 * 4}}
	for i := range n {
		wobble := 1 + 0.01*float64(i%5-2)/2
		res.Intervals = append(res.Intervals, result.Interval{TS: float64(i + 1), LengthS: 1, Requests: int64(rps),
			RequestsPerSec: rps * wobble, P50NS: p99 / 2, P99NS: int64(float64(p99) * wobble)})
	}
	return CompareRun{Name: name + ".json", Result: res}
}

// A run 20% faster than the reference stands out of its intervals' noise;
// one 0.1% faster does not; each ratio is against the first run.
func TestComparePageJudgesTheNoise(t *testing.T) {
	a, fast, same := intervalsRun("a", 12, 1000, 2e6), intervalsRun("fast", 12, 1200, 1e6), intervalsRun("same", 12, 1001, 2e6)
	p, err := ComparePage([]CompareRun{a, fast, same}, []string{"a.json", "fast.json", "same.json"})
	page := render(t, p, err)
	for _, want := range []string{`data-run="a.json"`, `data-run="fast.json"`, `data-run="same.json"`, `data-ratio="rps">×1.200<`,
		`data-ratio="p99">×0.500<`, `data-chart="compare-throughput"`, `data-chart="compare-p99"`} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	for _, tc := range []struct{ row, verdict string }{
		{"fast.json/req/s", "stands out of the noise"}, {"fast.json/p99", "stands out of the noise"},
		{"same.json/req/s", "within the noise"}, {"same.json/p99", "within the noise"},
	} {
		i := strings.Index(page, `data-noise="`+tc.row+`"`)
		if i < 0 {
			t.Errorf("no noise row %s", tc.row)
			continue
		}
		if row := page[i:min(len(page), i+strings.Index(page[i:], "</tr>"))]; !strings.Contains(row, tc.verdict) {
			t.Errorf("%s: %s; want %q", tc.row, row, tc.verdict)
		}
	}
}

// Too few intervals are not judged; fewer than two runs, or an empty one,
// make no page.
func TestComparePageRefuses(t *testing.T) {
	p, err := ComparePage([]CompareRun{intervalsRun("a", 1, 1000, 2e6), intervalsRun("b", 1, 1100, 2e6)}, nil)
	if page := render(t, p, err); !strings.Contains(page, "not judged") {
		t.Error("one interval each was judged")
	}
	if _, err := ComparePage([]CompareRun{intervalsRun("a", 3, 1000, 2e6)}, nil); !errors.Is(err, ErrFewRuns) {
		t.Errorf("one run: %v", err)
	}
	empty := CompareRun{Name: "e.json", Result: &result.Result{Version: result.ResultVersion}}
	if _, err := ComparePage([]CompareRun{intervalsRun("a", 3, 1000, 2e6), empty}, nil); !errors.Is(err, ErrEmpty) || !strings.Contains(err.Error(), "e.json") {
		t.Errorf("an empty run: %v", err)
	}
}

// A run with no latency (every response refused by a check) keeps its
// place in the latency chart's legend, so each run has one colour across
// the page's charts.
func TestCompareRunKeepsItsColourWithoutLatency(t *testing.T) {
	failed, answered := intervalsRun("failed", 3, 1000, 0), intervalsRun("answered", 3, 1000, 2e6)
	h := result.NewHistogram()
	for v := int64(1000); v < 3e6; v += 1000 {
		h.RecordValue(v)
	}
	enc, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		t.Fatal(err)
	}
	answered.Result.Histogram = string(enc)
	p, err := ComparePage([]CompareRun{failed, answered}, nil)
	page := render(t, p, err)
	i := strings.Index(page, `data-chart="compare-spectrum"`)
	if i < 0 {
		t.Fatal("no latency chart")
	}
	chart := page[i : i+strings.Index(page[i:], "</svg>")]
	for _, want := range []string{`class="legend l0" x="`, `>failed.json</text>`, `class="s1" data-series="answered.json"`} {
		if !strings.Contains(chart, want) {
			t.Errorf("latency chart lacks %q", want)
		}
	}
	if strings.Contains(chart, `class="s0"`) {
		t.Error("the run without latency drew a line")
	}
}
