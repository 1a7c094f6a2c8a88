package result

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"weaseldb/internal/numfmt"
)

// Thresholds (--threshold, repeatable): a condition on a finished run's
// result, judged at its end, as k6 judges its thresholds. A latency
// threshold reads the run's latency histogram, which in rate mode is the
// corrected latency (from each request's intended send time); "errors" is
// every request that did not get a good answer (failed, unfinished, dropped,
// non-2xx and failed connects: what --max-errors counts), as a count or, with
// a % limit, a percentage of the due requests; "rps" is the answered
// requests per second of the measured window.

// Threshold is one parsed expression: Metric Op Limit.
type Threshold struct {
	Expr    string  `json:"expr"`    // as given, spaces removed
	Metric  string  `json:"metric"`  // p50, p90, p99, p99.9, max, mean, errors, rps
	Op      string  `json:"op"`      // <, <=, >, >=
	Limit   float64 `json:"limit"`   // ns (latency), a count or a percentage (errors), req/s (rps)
	Percent bool    `json:"percent"` // errors: Limit is a percentage of the due requests; checks: always
	// Check is the --check a check[EXPR] threshold names, spaces removed
	// (Metric is then "check"); "checks" is every check's outcomes.
	Check string `json:"check,omitempty"`
}

// ThresholdResult is a threshold judged against one result.
type ThresholdResult struct {
	Threshold
	Measured float64 `json:"measured"` // in Limit's unit
	Pass     bool    `json:"pass"`
	// Reason says why a threshold failed with nothing to judge (no
	// answered request for a latency, no check outcome for checks): it
	// fails rather than pass on no data.
	Reason string `json:"reason,omitempty"`
}

// thresholdMetrics are the metrics a threshold may name; latency ones take
// a duration limit.
var thresholdMetrics = map[string]bool{"p50": true, "p90": true, "p99": true, "p99.9": true, "max": true, "mean": true, "errors": false, "rps": false,
	"checks": false, "check": false}

// ParseThreshold reads one expression: p99<5ms, p99.9<=20ms, max<1s,
// errors<0.1%, errors<=10, rps>10000. The error names the expression and
// what was wanted.
func ParseThreshold(expr string) (Threshold, error) {
	s := strings.Join(strings.Fields(expr), "")
	bad := func(why string) (Threshold, error) {
		return Threshold{}, fmt.Errorf("--threshold %q: %s (want METRIC OP LIMIT: p99<5ms, errors<0.1%%, rps>10000; METRIC one of p50, p90, p99, p99.9, max, mean, errors, rps, checks, check[EXPR]; OP one of <, <=, >, >=)", expr, why)
	}
	from := 0
	if strings.HasPrefix(strings.ToLower(s), "check[") {
		from = strings.LastIndex(s, "]") // the comparison comes after the check's own
		if from < len("check[") {
			return bad("check[EXPR]: no closing ]")
		}
	}
	i := strings.IndexAny(s[from:], "<>")
	if i <= 0 {
		return bad("no metric and comparison")
	}
	i += from
	t := Threshold{Expr: s, Metric: strings.ToLower(s[:i]), Op: s[i : i+1]}
	if from > 0 {
		t.Metric, t.Check = "check", s[len("check["):from]
	}
	rest := s[i+1:]
	if strings.HasPrefix(rest, "=") {
		t.Op += "="
		rest = rest[1:]
	}
	if t.Metric == "p999" {
		t.Metric = "p99.9"
	}
	latency, known := thresholdMetrics[t.Metric]
	switch {
	case !known:
		return bad(fmt.Sprintf("unknown metric %q", t.Metric))
	case rest == "":
		return bad("no limit")
	case strings.ContainsAny(rest, "<>="):
		return bad("one comparison only")
	}
	switch {
	case latency:
		d, err := time.ParseDuration(rest)
		if err != nil || d <= 0 {
			return bad(fmt.Sprintf("limit %q: a latency limit is a positive duration (5ms, 500us, 1.5s)", rest))
		}
		t.Limit = float64(d)
	case t.Metric == "checks" || t.Metric == "check":
		num, pct := strings.CutSuffix(rest, "%")
		v, err := strconv.ParseFloat(num, 64)
		if err != nil || !pct || v < 0 || v > 100 {
			return bad(fmt.Sprintf("limit %q: a checks limit is a percentage of responses that passed (99.9%%)", rest))
		}
		t.Limit, t.Percent = v, true
	case t.Metric == "errors":
		num, pct := strings.CutSuffix(rest, "%")
		v, err := strconv.ParseFloat(num, 64)
		if err != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v) || pct && v > 100 {
			return bad(fmt.Sprintf("limit %q: an errors limit is a count (10) or a percentage of the due requests (0.1%%)", rest))
		}
		t.Limit, t.Percent = v, pct
	default: // rps
		v, err := strconv.ParseFloat(rest, 64)
		if err != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v) {
			return bad(fmt.Sprintf("limit %q: an rps limit is a number of requests per second", rest))
		}
		t.Limit = v
	}
	return t, nil
}

// ParseThresholds parses each expression, all errors joined.
func ParseThresholds(exprs []string) ([]Threshold, error) {
	var out []Threshold
	for _, e := range exprs {
		t, err := ParseThreshold(e)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

// checkOutcomes counts the outcomes a checks or check[EXPR] threshold
// judges: passed, and in all.
func (t Threshold) checkOutcomes(res *Result) (pass, all int64) {
	for _, c := range res.Checks {
		if t.Check == "" || strings.Join(strings.Fields(c.Expr), "") == t.Check {
			pass, all = pass+c.Passed, all+c.Passed+c.Failed
		}
	}
	return pass, all
}

// nothingToJudge says why res holds nothing t can be judged on ("" when
// it does): a latency with no answered request, checks with no outcome.
func (t Threshold) nothingToJudge(res *Result) string {
	switch {
	case t.latencyMetric() && max(res.Answered, res.Requests) == 0:
		return "nothing to judge: no request was answered; the failed ones' latency is reported apart"
	case t.Metric == "checks" || t.Metric == "check":
		if _, all := t.checkOutcomes(res); all == 0 {
			return "nothing to judge: no response was judged by the checks it names"
		}
	}
	return ""
}

// checksPassed is the percentage of check outcomes that passed: every
// check's, or the one check[EXPR] names (100 when none was judged: such a
// threshold fails anyway, nothingToJudge).
func (t Threshold) checksPassed(res *Result) float64 {
	pass, all := t.checkOutcomes(res)
	if all == 0 {
		return 100
	}
	return 100 * float64(pass) / float64(all)
}

// latencyMetric reports whether the metric is a latency (ns).
func (t Threshold) latencyMetric() bool { return thresholdMetrics[t.Metric] }

// measure is the threshold's metric in res, in its limit's unit.
func (t Threshold) measure(res *Result) float64 {
	l := res.Latency
	switch t.Metric {
	case "p50":
		return float64(l.P50)
	case "p90":
		return float64(l.P90)
	case "p99":
		return float64(l.P99)
	case "p99.9":
		return float64(l.P999)
	case "max":
		return float64(l.Max)
	case "mean":
		return l.Mean
	case "rps":
		return res.RequestsPerSec
	case "checks", "check":
		return t.checksPassed(res)
	}
	bad := float64(res.Errors + res.Unfinished + res.Dropped)
	if !t.Percent {
		return bad
	}
	due := float64(max(res.Due, res.Requests))
	switch {
	case due > 0:
		return min(100, 100*bad/due)
	case bad > 0:
		return 100
	}
	return 0
}

// holds reports whether measured meets the threshold.
func (t Threshold) holds(measured float64) bool {
	switch t.Op {
	case "<":
		return measured < t.Limit
	case "<=":
		return measured <= t.Limit
	case ">":
		return measured > t.Limit
	}
	return measured >= t.Limit
}

// JudgeThresholds judges each threshold against res; pass is true when
// every one holds (and when there are none).
func JudgeThresholds(res *Result, ts []Threshold) (out []ThresholdResult, pass bool) {
	pass = true
	for _, t := range ts {
		m := t.measure(res)
		r := ThresholdResult{Threshold: t, Measured: m, Pass: t.holds(m)}
		if r.Reason = t.nothingToJudge(res); r.Reason != "" {
			r.Pass = false
		}
		pass = pass && r.Pass
		out = append(out, r)
	}
	return out, pass
}

// ThresholdsPass reports whether every judged threshold of res held.
func (r *Result) ThresholdsPass() bool {
	for _, t := range r.Thresholds {
		if !t.Pass {
			return false
		}
	}
	return true
}

// format writes v in the threshold's unit.
func (t Threshold) format(v float64) string {
	switch {
	case t.latencyMetric():
		return numfmt.Latency(int64(v))
	case t.Percent:
		return strconv.FormatFloat(v, 'g', 4, 64) + "%"
	case t.Metric == "rps":
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// MeasuredText is what was measured, in the threshold's unit (what the
// summary's table prints: a latency, a percentage, req/s or a count).
func (r ThresholdResult) MeasuredText() string { return r.format(r.Measured) }

// PrintThresholds writes the table of judged thresholds: threshold,
// measured, pass or FAIL.
func PrintThresholds(w io.Writer, rs []ThresholdResult) {
	if len(rs) == 0 {
		return
	}
	width := len("threshold")
	for _, r := range rs {
		width = max(width, len(r.Expr))
	}
	fmt.Fprintf(w, "  %-*s  %12s  %s\n", width, "threshold", "measured", "result")
	for _, r := range rs {
		verdict := "pass"
		if !r.Pass {
			verdict = "FAIL"
		}
		if r.Reason != "" {
			verdict += ": " + r.Reason
		}
		fmt.Fprintf(w, "  %-*s  %12s  %s\n", width, r.Expr, r.format(r.Measured), verdict)
	}
}

// crossedLine names the thresholds of rs that did not hold, for one line.
func crossedLine(rs []ThresholdResult) string {
	var parts []string
	for _, r := range rs {
		switch {
		case r.Reason != "":
			parts = append(parts, fmt.Sprintf("%s (%s)", r.Expr, r.Reason))
		case !r.Pass:
			parts = append(parts, fmt.Sprintf("%s (measured %s)", r.Expr, r.format(r.Measured)))
		}
	}
	return strings.Join(parts, ", ")
}

// CrossedThresholds is the one line naming res's crossed thresholds ("" if
// none).
func (r *Result) CrossedThresholds() string { return crossedLine(r.Thresholds) }
