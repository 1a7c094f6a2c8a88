// Package cpuwork spends a known amount of CPU: SpendCPUCycles(n) runs a loop
// whose cost is linear in n, so a benchmark or the server's /ok route can do a
// measured amount of work per item. The loop is hand-written assembly on amd64
// and arm64 (it is the unit of work every benchmark counts in, so its cost must
// not change with the compiler) with a portable Go fallback elsewhere.
package cpuwork

import "time"

// chunkIterations bounds one call into the assembly loop. Assembly functions
// are not asynchronous preemption points, so a single call with a huge count
// would hold its P until it returned; at about 0.2-0.5 ns per iteration a chunk
// lasts roughly 15-35 µs, after which the Go loop below can be preempted.
const chunkIterations = 1 << 16

// SpendCPUCycles runs a dependent decrement-and-branch loop of the given number
// of iterations. Its cost is linear in iterations (one loop-carried dependency
// per iteration, so about one cycle each); zero or negative counts return at once.
// The compiler cannot remove it: the loop lives in assembly (or, in the
// fallback, feeds a package-level sink).
func SpendCPUCycles(iterations int) {
	for iterations > chunkIterations {
		spinChunk(chunkIterations)
		iterations -= chunkIterations
	}
	if iterations > 0 {
		spinLoop(iterations)
	}
}

// spinChunk is a real (not inlined) Go call between chunks: its prologue checks
// the stack guard, which is where the scheduler's preemption request is seen.
// Calling the assembly directly would not do: a leaf assembly function has no
// such check and is not an asynchronous safe point either.
//
//go:noinline
func spinChunk(n int) {
	spinLoop(n)
}

// spinForStep is how many loop iterations SpinFor runs between two clock
// reads: short enough (tens of ns) to overshoot its deadline by little, long
// enough that reading the clock (about 20 ns through the vDSO) is not most
// of the work.
const spinForStep = 64

// SpinFor busy-waits until d of wall-clock time has passed. Unlike
// SpendCPUCycles its cost does not depend on how fast the core runs the loop
// (a sibling hyper-thread or a changed clock speed), which makes it the
// deterministic slowdown for validating a regression gate. It never sleeps:
// the time is spent on the CPU, like real work on a request.
func SpinFor(d time.Duration) {
	if d <= 0 {
		return
	}
	start := time.Now()
	for time.Since(start) < d {
		spinLoop(spinForStep)
	}
}
