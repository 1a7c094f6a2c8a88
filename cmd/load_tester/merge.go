package main

import (
	"errors"
	"flag"
	"fmt"
	"io"

	"weaseldb/loadtester"
	"weaseldb/loadtester/result"
)

// `load_tester merge`: flags, reading the inputs, the summary and the
// outputs; the merge itself is result.Merge.

const mergeUsage = `load_tester merge: add the results of several load_tester instances exactly.

Usage: load_tester merge [--json OUT] [--hdr-log OUT] [--vegeta OUT] IN.json...
(flags before, between or after the inputs)

Histograms are added (never percentiles averaged), counts summed per
wall-clock interval. Prints the summary of a single run plus one row per
instance; warns when windows do not overlap within one interval, configs
differ or an instance was client-bound. Exit status as for a single run (1
when failed + unfinished + dropped + other errors exceed --max-errors, 99
when a --threshold is crossed by the merged result);
refuses (exit 2) no inputs, inputs of another schema version, and truncated
or corrupt inputs. --vegeta merges the
instances' own --vegeta files (found as recorded, or beside their JSON).

Flags:
`

// runMerge is the merge subcommand; it returns the exit status.
func runMerge(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("load_tester merge", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	jsonOut := fs.String("json", "", "write the merged result to `FILE`")
	hdrOut := fs.String("hdr-log", "", "write the merged HdrHistogram interval log to `FILE`")
	vegetaOut := fs.String("vegeta", "", "write the instances' vegeta results, merged, to `FILE`")
	maxErrors := fs.Int64("max-errors", 0, "failed + unfinished + dropped requests and other errors, over all instances, tolerated before the exit status is 1")
	var thresholds []result.Threshold
	fs.Var(thresholdFlag{&thresholds}, "threshold", "judge the merged result: `EXPR` as for a run (p99<5ms, errors<0.1%, rps>10000); repeatable; a crossed one exits 99")
	paths, err := parseInterspersed(fs, args) // flags before, between or after the inputs, as html takes them
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, mergeUsage)
			fs.SetOutput(stdout)
			fs.PrintDefaults()
			return exitOK
		}
		fmt.Fprintf(stderr, "load_tester merge: %s (see --help)\n", oneLine(err))
		return exitUsage
	}
	inputs := make([]result.MergeInput, 0, len(paths))
	for _, path := range paths {
		r, err := result.ReadResult(path)
		if err != nil {
			fmt.Fprintf(stderr, "load_tester merge: refused: %s\n", oneLine(err))
			return exitUsage
		}
		inputs = append(inputs, result.MergeInput{Path: path, Result: r})
	}
	res, err := result.Merge(inputs)
	if err != nil {
		fmt.Fprintf(stderr, "load_tester merge: refused: %s\n", oneLine(err))
		return exitUsage
	}
	if *vegetaOut != "" {
		if err := loadtester.MergeVegetaFiles(*vegetaOut, inputs); err != nil {
			fmt.Fprintf(stderr, "load_tester merge: %s\n", oneLine(err))
			return exitFailure
		}
		res.VegetaFile = *vegetaOut
	}
	res.Thresholds, _ = result.JudgeThresholds(res, thresholds)
	res.PrintSummary(stdout)
	res.PrintInstances(stdout)
	outcome, verdict, reason := result.Verdict(res, *maxErrors)
	fmt.Fprintf(stdout, "  verdict       %s\n", verdict)
	if *hdrOut != "" {
		if err := loadtester.WriteHDRLogFile(*hdrOut, res); err != nil {
			fmt.Fprintf(stderr, "load_tester merge: %s\n", oneLine(err))
			return exitFailure
		}
	}
	if *jsonOut != "" {
		if err := loadtester.WriteJSONFile(*jsonOut, res); err != nil {
			fmt.Fprintf(stderr, "load_tester merge: %s\n", oneLine(err))
			return exitFailure
		}
	}
	if reason != "" {
		fmt.Fprintf(stderr, "load_tester merge: %s\n", reason)
	}
	return thresholdStatus(outcomeStatus(outcome), res, stderr, "load_tester merge")
}
