// Package gate is the CI regression gate on requests/sec: it drives server
// binaries and the load tester as subprocesses, compares their throughput
// (A/B in one interleaved run, or against a recorded baseline) and gives a
// verdict that survives a noisy shared machine.
//
// It is the engine, as x/perf's benchstat is to benchmath: the time tier
// (rounds of interleaved runs, runner.go, rounds.go) and the cost tier
// (instructions per request under callgrind, cost.go, costrun.go), the
// options, the scenarios file and the result's schema. Its pure parts sit
// below it: gate/stats (the ratio, its interval, the rank test, change
// points), gate/callgrind (callgrind's format, the filter, the diff) and
// gate/valgrind (valgrind's environment on this machine). Above it, and
// never imported by it: gate/render (the table, markdown and JSON) and
// gate/history (the recorded results and their change points).
package gate
