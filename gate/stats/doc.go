// Package stats is the gate's statistics, pure functions of samples (as
// golang.org/x/perf/benchmath is benchstat's): the ratio of two sides'
// figures with its distribution-free interval, paired or not; the rank
// test reported beside it; a sample's robust spread; and the change points
// of a series (the history tier's). It knows nothing of servers, load
// testers or verdicts: the gate's rule (gate/verdict) reads these.
package stats

// The statistics come from golang.org/x/perf/benchmath, benchstat's engine:
// medians with distribution-free intervals (order statistics) and the
// Mann-Whitney U test. What the gate adds is what the library lacks: it
// takes one sample per round (B's req/s over A's, measured side by side by
// fresh server processes), which is how a paired design enters a library
// of unpaired samples, and it combines two medians' intervals into one for
// the ratio in baseline mode. The medians it reports are the tree's one
// median (internal/stats); benchmath gives only the intervals around them.
