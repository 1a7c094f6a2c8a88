package gate

import (
	"context"
	"testing"
	"time"
)

// estimates records what the gate tells a progress writer: each estimate
// and the lab's clock when it came.
type estimates struct {
	lab  *synthLab
	left []time.Duration
	at   []time.Time
}

func (e *estimates) Write(p []byte) (int, error) { return len(p), nil }

func (e *estimates) ExpectLeft(left time.Duration, atMost bool) {
	e.left, e.at = append(e.left, left), append(e.at, e.lab.now())
}

// After every round the gate says about how long the planned rounds still
// take (the rounds so far, on average, times those left), and once the
// rounds are over that it does not know (the cost tier and the report come
// next).
func TestGateEstimatesTheRoundsLeft(t *testing.T) {
	o := synthOptions(t)
	o.Rounds = 4
	l := newSynthLab(steady(100000, 100000))
	e := &estimates{lab: l}
	one(t, run(context.Background(), o, e, l, l.now))
	if len(e.left) < o.Rounds+1 {
		t.Fatalf("%d estimates (%v), want one a round and a last one", len(e.left), e.left)
	}
	if last := e.left[len(e.left)-1]; last != 0 {
		t.Errorf("the last estimate is %v, want 0 (not known) once the rounds are over", last)
	}
	// A steady lab's rounds all take as long: after round 2 (the first
	// measured without the warm-up), 2 rounds are left of 4.
	round := e.at[2].Sub(e.at[1])
	if got, want := e.left[1], 2*round; got < want*9/10 || got > want*11/10 {
		t.Errorf("after round 2 of 4: about %v left, want about %v (2 rounds of %v)", got, want, round)
	}
	for i := 1; i < o.Rounds; i++ {
		if e.left[i] >= e.left[i-1] {
			t.Errorf("estimates %v do not fall round by round", e.left)
		}
	}
}
