package result

import (
	"bytes"
	"strings"
	"testing"
)

// failedRun is a run whose every request failed its check after latency
// v ns each (n of them), its JSON read back.
func failedRun(t *testing.T, name string, v, n int64) *Result {
	t.Helper()
	h := NewHistogram()
	h.RecordValues(v, n)
	r := &Result{Version: ResultVersion, Instance: name, WindowStart: "2026-12-01T10:00:00Z", DurationS: 1,
		Due: n, Failed: n, Errors: n, ErrorsByKind: map[string]int64{"check": n},
		Intervals: []Interval{{TS: 1, LengthS: 1, Errors: n}},
		Kinds:     []KindResult{{Name: "a", Weight: 1, Due: n, Failed: n}},
		Stages:    []StageResult{{Stage: 1, EndS: 1, From: 10, To: 10, MeasuredS: 1, Due: n, Failed: n}}}
	r.SetFailedHistogram(h)
	r.Kinds[0].SetFailedHistogram(h)
	r.Stages[0].SetFailedHistogram(h)
	var buf bytes.Buffer
	if err := WriteJSON(&buf, r); err != nil {
		t.Fatal(err)
	}
	back, err := ParseResult(buf.Bytes(), name)
	if err != nil {
		t.Fatal(err)
	}
	return back
}

// The failed requests' latency goes through the JSON, an exact merge (the
// run's, each kind's and each stage's histograms added), the HDR log (a
// line tagged "failed") and the summary.
func TestFailedLatencyThroughJSONMergeAndLog(t *testing.T) {
	a, b := failedRun(t, "a", 1000, 30), failedRun(t, "b", 5000, 10)
	if a.FailedLatency == nil || a.FailedLatency.P50 != 1000 || a.FailedHist().TotalCount() != 30 {
		t.Fatalf("read back: %+v", a.FailedLatency)
	}
	m, err := Merge([]MergeInput{{Path: "a.json", Result: a}, {Path: "b.json", Result: b}})
	if err != nil {
		t.Fatal(err)
	}
	for what, got := range map[string]*Latency{"run": m.FailedLatency, "kind": m.Kinds[0].FailedLatency, "stage": m.Stages[0].FailedLatency} {
		if got == nil || got.P50 != 1000 || got.P99 < 4990 || got.Max < 4990 {
			t.Errorf("merged %s failed latency %+v: want a's and b's added", what, got)
		}
	}
	if m.FailedHist().TotalCount() != 40 || m.Failed != 40 || m.Answered != 0 {
		t.Errorf("merged: failed histogram %d values, failed %d, answered %d", m.FailedHist().TotalCount(), m.Failed, m.Answered)
	}
	var log bytes.Buffer
	if err := WriteHDRLog(&log, m); err != nil {
		t.Fatal(err)
	}
	if strings.Count(log.String(), "Tag=failed,") != 1 {
		t.Errorf("HDR log: want one line tagged failed:\n%s", log.String())
	}
	var sum bytes.Buffer
	m.PrintSummary(&sum)
	if !strings.Contains(sum.String(), "failed latency p50 1.0µs") || strings.Count(sum.String(), "failed latency (a response") != 2 {
		t.Errorf("summary:\n%s", sum.String())
	}
}

// No threshold passes on no data: a latency one without an answered
// request, a checks one without a check outcome, an objective (--slo)
// without an answered request. Each says why.
func TestNothingToJudgeFails(t *testing.T) {
	none := &Result{Due: 10, Failed: 10, Errors: 10, Checks: []CheckResult{{Expr: "status==201", Failed: 10}}}
	unjudged := &Result{Due: 10, Failed: 10, Checks: []CheckResult{{Expr: "status==201"}}}
	for _, tc := range []struct {
		res    *Result
		expr   string
		reason bool
		pass   bool
	}{
		{none, "p99<1ms", true, false},
		{none, "mean<1s", true, false},
		{none, "checks>0%", false, false}, // ten outcomes, all failed: 0%
		{unjudged, "checks>99%", true, false},
		{unjudged, "check[status==201]>99%", true, false},
		{none, "errors<=10", false, true}, // errors are judged on the due requests
	} {
		th, err := ParseThreshold(tc.expr)
		if err != nil {
			t.Fatal(err)
		}
		rs, pass := JudgeThresholds(tc.res, []Threshold{th})
		if pass != tc.pass || rs[0].Pass != tc.pass || (rs[0].Reason != "") != tc.reason {
			t.Errorf("%s: pass %v, reason %q", tc.expr, pass, rs[0].Reason)
		}
	}
	th, _ := ParseThreshold("p99<1ms")
	rs, _ := JudgeThresholds(none, []Threshold{th})
	var b strings.Builder
	PrintThresholds(&b, rs)
	if !strings.Contains(b.String(), "FAIL: nothing to judge") {
		t.Errorf("table:\n%s", b.String())
	}
	objs, _ := ParseObjectives("p99=1ms")
	if pass, reasons := Judge(none, objs); pass || len(reasons) == 0 || !strings.Contains(reasons[0], "nothing to judge") {
		t.Errorf("--slo on no answer: pass %v, %q", pass, reasons)
	}
}
