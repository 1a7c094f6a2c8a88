package peertable

import (
	"fmt"

	"weaseldb/internal/numfmt"
)

// HeldRate is the share of the open loop's rate a client must answer to
// count as holding it: a client that falls behind sends fewer requests
// than asked, so its CPU per request is no price of the rate.
const HeldRate = 0.95

// holdRate judges a HoldRate goal's verdict by whether both clients held
// the run's rate (rate 0: not known, the verdict stands): the subject
// short is the goal not met; the peer short leaves nothing to compare
// against, so the goal is not measured.
func holdRate(v GoalVerdict, peers []PeerEntry, rate float64) GoalVerdict {
	if !v.HoldRate || rate <= 0 || v.Ratio == nil {
		return v
	}
	if rps, short := shortOfRate(v.Scenario, v.Subject, peers, rate); short {
		v.Verdict = VerdictNotMet
		v.Note = heldNote(v.Subject, rps, rate)
	} else if rps, short := shortOfRate(v.Scenario, v.Peer, peers, rate); short {
		v.Ratio = nil
		v.Verdict = VerdictNotMeasured
		v.Note = heldNote(v.Peer, rps, rate)
	}
	return v
}

// shortOfRate: the peer's median req/s and whether it is under HeldRate of
// rate.
func shortOfRate(scenario, peer string, peers []PeerEntry, rate float64) (float64, bool) {
	for _, p := range peers {
		if p.Scenario == scenario && p.Peer == peer && p.RequestsPerSec != nil {
			return *p.RequestsPerSec, *p.RequestsPerSec < HeldRate*rate
		}
	}
	return 0, false
}

func heldNote(peer string, rps, rate float64) string {
	return fmt.Sprintf("%s did not hold the rate (%s of %s req/s)", peer, numfmt.Format(rps, 0), numfmt.Format(rate, 0))
}
