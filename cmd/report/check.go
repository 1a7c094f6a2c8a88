package main

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"weaseldb/artifacts"
	"weaseldb/internal/benchmain"
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
	r, err := reports.LoadRun(*runDir)
	if err != nil {
		return err
	}
	cs := reports.CheckRun(r, o)
	if *out == "" {
		*out = filepath.Join(*runDir, artifacts.ChecksFile)
	}
	if err := benchmain.WriteJSON(*out, cs); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "report check: %s (%s)\n", cs.Summary, *out)
	for _, c := range cs.FailedChecks() {
		fmt.Fprintf(stdout, "  FAILED %s, %s: %s\n", c.Subject, c.Check, c.Detail)
	}
	if !cs.Passed {
		return fmt.Errorf("check: %s", cs.Summary)
	}
	return nil
}

// functionalReport renders a run whose CPUs were virtual as a functional
// check: RUN/manycore_report.md unless --out was given; exit 1 when a check
// failed (after writing it).
func functionalReport(r *reports.Run, runDir, out string, outSet bool, stdout io.Writer) error {
	if !outSet {
		out = filepath.Join(runDir, reports.FunctionalReportFile)
	}
	res, cs, err := reports.GenerateFunctional(r, reports.Options{OutPath: out, Command: fmt.Sprintf("report --run %s --out %s", runDir, out)})
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "report: wrote %s: a functional check (the run's CPUs were virtual), %s\n", res.Markdown, cs.Summary)
	if !cs.Passed {
		return fmt.Errorf("%s: %s", runDir, cs.Summary)
	}
	return nil
}
