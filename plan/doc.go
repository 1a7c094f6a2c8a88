// Package plan holds the plans of the report's benchmark runs: the setup
// fitted to the allowed CPUs (FitSetup) and the runs of the wait-strategy
// comparison with the CPUs of each (WaitStrategies). It only computes, from
// the allowed CPUs and the artifacts' types, so both sides of a run import
// it and neither imports the other: the runner (package bench) plans with
// it, and the report's checks (reports.CheckRun) plan again from a run's
// recorded allowed CPUs to hold the run to its plan. Which CPU each thread
// gets is internal/placement's, the one placement rule.
package plan
