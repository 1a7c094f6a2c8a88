package result

import "fmt"

// Outcome is what a finished run says against the errors it tolerates
// (cmd/load_tester turns it into its exit status).
type Outcome int

const (
	OutcomePass        Outcome = iota // every due request answered, or the rest within maxErrors
	OutcomeFail                       // more failed + unfinished + dropped requests and other errors than maxErrors, or no response at all
	OutcomeInterrupted                // interrupted: what was measured stands, unjudged
)

// Verdict judges a finished run: its outcome, a line for the summary and
// the one-line reason of a failure. Every due request that did not get a
// good answer counts against maxErrors: failed, unfinished and dropped
// requests, plus the other errors (non-2xx responses, failed connects).
func Verdict(res *Result, maxErrors int64) (outcome Outcome, verdict, reason string) {
	other := res.Errors - res.Failed
	bad := res.Errors + res.Unfinished + res.Dropped
	counts := fmt.Sprintf("failed %d + unfinished %d + dropped %d + other errors %d = %d",
		res.Failed, res.Unfinished, res.Dropped, other, bad)
	switch {
	case res.Interrupted:
		return OutcomeInterrupted, "interrupted: what was measured is above", ""
	case bad > maxErrors:
		return OutcomeFail, "FAILED: " + counts + fmt.Sprintf(", over --max-errors %d", maxErrors),
			counts + fmt.Sprintf(", over --max-errors %d", maxErrors)
	case res.Requests == 0 && res.failedCount() == 0: // failed checks got responses: within maxErrors, below
		return OutcomeFail, "FAILED: no responses received", "no responses received"
	case bad > 0:
		return OutcomePass, fmt.Sprintf("ok, but not clean: %s, within --max-errors %d", counts, maxErrors), ""
	}
	return OutcomePass, "ok: every due request answered", ""
}
