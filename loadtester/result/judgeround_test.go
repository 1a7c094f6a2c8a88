package result

import "testing"

// A short step is not failed by rounding alone: at 18.75/s for one second
// 18 requests fall due, and 18 answered carried the rate; one request's
// worth more short still fails.
func TestJudgeShortStepRounding(t *testing.T) {
	for _, tc := range []struct {
		answeredPerSec float64
		pass           bool
	}{{18, true}, {17.8, true}, {16.5, false}} {
		r := Result{RateAsked: 18.75, RequestsPerSec: tc.answeredPerSec, DurationS: 1}
		if pass, reasons := Judge(&r, nil); pass != tc.pass {
			t.Errorf("%.2f/s of 18.75/s over 1 s: pass %v (%q), want %v", tc.answeredPerSec, pass, reasons, tc.pass)
		}
	}
}
