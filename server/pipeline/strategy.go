package pipeline

import "fmt"

// WaitStrategy says what a pipeline thread does when it has nothing to do.
type WaitStrategy int

const (
	// WaitIfStageEmpty: a thread whose upstream has nothing spins briefly,
	// then parks until the upstream publishes. Every release wakes parked
	// downstream threads. Safe on shared CPUs; an idle pipeline uses no CPU.
	WaitIfStageEmpty WaitStrategy = iota
	// WaitIfUpstreamIdle: a thread keeps spinning as long as the producer has
	// published items it has not yet seen (work is in flight upstream) and
	// parks only once the producer has gone idle. Only the producer and the
	// last stage wake sleepers. Meant for dedicated cores.
	WaitIfUpstreamIdle
	// Never: threads spin and never park (yielding to the Go scheduler now and
	// then). Lowest latency; an idle pipeline keeps its threads busy.
	Never
)

var strategyNames = [...]string{"WaitIfStageEmpty", "WaitIfUpstreamIdle", "Never"}

// Strategies lists every wait strategy in declaration order.
func Strategies() []WaitStrategy {
	return []WaitStrategy{WaitIfStageEmpty, WaitIfUpstreamIdle, Never}
}

func (s WaitStrategy) String() string {
	if s >= 0 && int(s) < len(strategyNames) {
		return strategyNames[s]
	}
	return fmt.Sprintf("WaitStrategy(%d)", int(s))
}

func (s WaitStrategy) valid() bool { return s >= 0 && int(s) < len(strategyNames) }

// ParseWaitStrategy turns a strategy's name (as String writes it) back into
// the strategy. The error names the allowed values.
func ParseWaitStrategy(name string) (WaitStrategy, error) {
	for i, n := range strategyNames {
		if n == name {
			return WaitStrategy(i), nil
		}
	}
	return 0, fmt.Errorf("unknown wait strategy %q: want one of %q, %q, %q",
		name, strategyNames[0], strategyNames[1], strategyNames[2])
}
