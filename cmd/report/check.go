package main

import (
	"errors"
	"fmt"
	"io"

	"weaseldb/reports"
)

// check is `report check`: the functional checks of a run directory, into
// checks.json; exit 1 when one failed.
func check(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("report check", stderr)
	runDir := fs.String("run", "", "run directory (wait_strategies.json, setups.json and their artifacts)")
	var o reports.CheckOptions
	fs.IntVar(&o.CPUs, "cpus", 0, "the CPUs the run was to have: the machine's count and every planned set must be this (0: not checked)")
	fs.BoolVar(&o.RequireDedicated, "require-dedicated", false, "fail a dedicated run that was skipped for want of CPUs")
	out := fs.String("out", "", "checks to write (default RUN/checks.json)")
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	if *runDir == "" {
		fs.Usage()
		return errors.New("check needs --run DIR")
	}
	cs, path, err := reports.WriteChecks(*runDir, *out, o)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "report check: %s (%s)\n", cs.Summary, path)
	for _, c := range cs.FailedChecks() {
		fmt.Fprintf(stdout, "  FAILED %s, %s: %s\n", c.Subject, c.Check, c.Detail)
	}
	if !cs.Passed {
		return fmt.Errorf("check: %s", cs.Summary)
	}
	return nil
}
