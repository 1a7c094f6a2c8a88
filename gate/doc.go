// Package gate is the CI regression gate on requests/sec: it drives server
// binaries and the load tester as subprocesses, compares their throughput
// (A/B in one interleaved run, or against a recorded baseline) and gives a
// verdict that survives a noisy shared machine.
//
// It is the engine, as x/perf's benchstat CLI is to benchmath: the time
// tier (rounds of interleaved runs: runner.go, rounds.go, scenario.go,
// lab.go, pin.go, cputrace.go, cpujudge.go), the baseline, the options and
// the scenarios file, tiers.go, which runs the time tier and then hands
// the cost tier to gate/cost, and judge.go, which combines the tiers' and
// the scenarios' verdicts. It fills in a result and formats none of it.
//
// The gate's packages, each importing only those listed before it:
//
//   - gate/stats: the ratio and its interval, the rank test, the spread,
//     change points; pure functions of samples (benchmath's part).
//   - gate/verdict: the rule, an interval and the problems met becoming a
//     verdict, a reason code and an exit status; imports gate/stats.
//   - gate/callgrind: callgrind's output format, the filter and the diff
//     of two counts; pure.
//   - gate/valgrind: valgrind on this machine (its environment, its log,
//     callgrind_control, the traced system calls); runs valgrind's tools,
//     never a server.
//   - gate/result: the result's schema, which every layer above shares;
//     imports the four above.
//   - gate/launch: a server under test started on a fresh address, and a
//     load_tester run against it (over internal/serverproc and
//     internal/loadrun); imports gate/result.
//   - gate/cost: the cost tier (instructions per request under callgrind:
//     cost.go judges, run.go counts one run, diff.go names the functions
//     that moved, preflight.go fits valgrind to this machine); imports
//     all of the above, never gate.
//   - gate (this package): the time tier and the verdict over both tiers;
//     imports all of the above.
//   - gate/render (the table, the markdown, the JSON) and gate/history
//     (gate record and gate history): read a result; import gate/result
//     and the pure packages, never the engine, which never imports them.
//   - cmd/gate: flags and wiring over gate, gate/render and gate/history;
//     cmd/peers counts its peers with gate/callgrind and gate/valgrind.
package gate
