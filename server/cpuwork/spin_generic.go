//go:build (!amd64 && !arm64) || purego

package cpuwork

// sink receives the loop's result so the compiler cannot drop the loop.
var sink uint64

// spinLoop is the portable fallback: a multiply-add chain, one dependent step
// per iteration. Being Go code it is preemptible; it costs more per iteration
// than the assembly loop, so compare figures only within one architecture.
func spinLoop(n int) {
	x := uint64(n)
	for i := 0; i < n; i++ {
		x = x*6364136223846793005 + 1442695040888963407
	}
	sink = x
}
