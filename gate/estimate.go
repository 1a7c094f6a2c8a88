package gate

import "time"

// estimator is what a progress writer may also be, to be told about how
// long the rounds planned so far will still take (internal/progress.Line
// is one: on a terminal it shows about how long is left). The gate cannot
// know its length ahead: rounds are added while a scenario is undecided,
// so the estimate is revised after every round and every look.
type estimator interface {
	ExpectLeft(left time.Duration, atMost bool)
}

// expectLeft tells the progress writer, if it is an estimator, about how
// long the rounds up to target take from round on: each active scenario's
// rounds so far, on average, times the rounds left. 0 (target reached, or
// the rounds over) says the length is not known: the cost tier and the
// report come after the rounds.
func (m *measurement) expectLeft(round, target int) {
	e, ok := m.progress.(estimator)
	if !ok {
		return
	}
	var left time.Duration
	for _, sc := range m.active() {
		left += sc.spent / time.Duration(max(sc.r.Rounds, 1)) * time.Duration(max(target-round, 0))
	}
	e.ExpectLeft(left, false)
}
