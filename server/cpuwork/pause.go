package cpuwork

// Pause is one spin-wait hint to the CPU (PAUSE on amd64, YIELD on arm64,
// nothing elsewhere): a polling loop calls it between polls so it lets an SMT
// sibling run and leaves the spin loop without a memory-order mis-speculation.
// Its cost varies by CPU (about 10 ns to 40 ns on x86), so bound spins by time,
// never by a count of Pause calls.
func Pause() { pause() }
