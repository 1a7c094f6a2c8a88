package loadtester

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// `load_tester merge`: flags, reading the inputs, the summary and the
// outputs; the merge itself is in merge.go.

const mergeUsage = `load_tester merge: add the results of several load_tester instances exactly.

Usage: load_tester merge [--json OUT] [--hdr-log OUT] [--vegeta OUT] IN.json...

Histograms are added (never percentiles averaged), counts summed per
wall-clock interval. Prints the summary of a single run plus one row per
instance; warns when windows do not overlap within one interval, configs
differ or an instance was client-bound. Exit status as for a single run (1
when failed + unfinished + dropped + other errors exceed --max-errors);
refuses (exit 2) no inputs, inputs of another schema version, and truncated
or corrupt inputs. --vegeta merges the
instances' own --vegeta files (found as recorded, or beside their JSON).

Flags:
`

// MergeMain is the merge subcommand; it returns the exit status.
func MergeMain(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("load_tester merge", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	jsonOut := fs.String("json", "", "write the merged result to `FILE`")
	hdrOut := fs.String("hdr-log", "", "write the merged HdrHistogram interval log to `FILE`")
	vegetaOut := fs.String("vegeta", "", "write the instances' vegeta results, merged, to `FILE`")
	maxErrors := fs.Int64("max-errors", 0, "failed + unfinished + dropped requests and other errors, over all instances, tolerated before the exit status is 1")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, mergeUsage)
			fs.SetOutput(stdout)
			fs.PrintDefaults()
			return ExitOK
		}
		fmt.Fprintf(stderr, "load_tester merge: %s (see --help)\n", oneLine(err))
		return ExitUsage
	}
	inputs := make([]MergeInput, 0, fs.NArg())
	for _, path := range fs.Args() {
		r, err := ReadResult(path)
		if err != nil {
			fmt.Fprintf(stderr, "load_tester merge: refused: %s\n", oneLine(err))
			return ExitUsage
		}
		inputs = append(inputs, MergeInput{Path: path, Result: r})
	}
	res, err := Merge(inputs)
	if err != nil {
		fmt.Fprintf(stderr, "load_tester merge: refused: %s\n", oneLine(err))
		return ExitUsage
	}
	if *vegetaOut != "" {
		if err := mergeVegeta(*vegetaOut, inputs); err != nil {
			fmt.Fprintf(stderr, "load_tester merge: %s\n", oneLine(err))
			return ExitFailure
		}
		res.VegetaFile = *vegetaOut
	}
	res.PrintSummary(stdout)
	res.PrintInstances(stdout)
	code, verdict, reason := Verdict(res, *maxErrors)
	fmt.Fprintf(stdout, "  verdict       %s\n", verdict)
	if *hdrOut != "" {
		if err := writeMergedHDRLog(*hdrOut, res); err != nil {
			fmt.Fprintf(stderr, "load_tester merge: %s\n", oneLine(err))
			return ExitFailure
		}
	}
	if *jsonOut != "" {
		if err := res.WriteJSON(*jsonOut); err != nil {
			fmt.Fprintf(stderr, "load_tester merge: %s\n", oneLine(err))
			return ExitFailure
		}
	}
	if reason != "" {
		fmt.Fprintf(stderr, "load_tester merge: %s\n", reason)
	}
	return code
}

// writeMergedHDRLog writes the merged intervals as an HdrHistogram log whose
// base time is the merged window's start.
func writeMergedHDRLog(path string, res *Result) error {
	start, err := time.Parse(time.RFC3339Nano, res.WindowStart)
	if err != nil {
		return fmt.Errorf("--hdr-log: window_start: %w", err)
	}
	w, err := newHDRLogWriter(path)
	if err != nil {
		return err
	}
	var prev int64
	for _, iv := range res.Intervals {
		end := int64(seconds(iv.TS))
		h := newHistogram()
		if iv.Histogram != "" {
			dec, err := decodeHist(iv.Histogram)
			if err != nil {
				w.close()
				return fmt.Errorf("--hdr-log: %w", err)
			}
			h.Merge(dec)
		}
		w.write(h, start, max(prev, end-int64(seconds(iv.LengthS))), end)
		prev = end
	}
	return w.close()
}

// mergeVegeta reads each instance's vegeta results and writes them as one
// attack, in timestamp order, numbered from 0 without gaps (vegeta plot
// needs that).
func mergeVegeta(out string, inputs []MergeInput) error {
	var all []vegeta.Result
	for _, in := range inputs {
		path, err := vegetaFileOf(in)
		if err != nil {
			return err
		}
		results, err := readVegetaFile(path)
		if err != nil {
			return err
		}
		all = append(all, results...)
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].Timestamp.Before(all[j].Timestamp) })
	f, err := os.Create(out)
	if err != nil {
		return fmt.Errorf("--vegeta: %w", err)
	}
	w := bufio.NewWriter(f)
	enc := vegeta.NewEncoder(w)
	for i := range all {
		all[i].Seq, all[i].Attack = uint64(i), "load_tester"
		if all[i].Headers == nil {
			all[i].Headers = http.Header{}
		}
		if err := enc.Encode(&all[i]); err != nil {
			f.Close()
			return fmt.Errorf("--vegeta: %w", err)
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("--vegeta: %w", err)
	}
	return f.Close()
}

// vegetaFileOf finds an instance's vegeta results: where it wrote them, or
// under the same name beside its JSON (where collected files usually land).
func vegetaFileOf(in MergeInput) (string, error) {
	rec := in.Result.VegetaFile
	if rec == "" {
		return "", fmt.Errorf("--vegeta: %s was run without --vegeta", in.Path)
	}
	beside := filepath.Join(filepath.Dir(in.Path), filepath.Base(rec))
	for _, p := range []string{beside, rec} {
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("--vegeta: %s's results %s not found (nor beside it as %s)", in.Path, rec, beside)
}

func readVegetaFile(path string) ([]vegeta.Result, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("--vegeta: %w", err)
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Size() == 0 {
		return nil, nil
	}
	dec := vegeta.DecoderFor(f)
	if dec == nil {
		return nil, fmt.Errorf("--vegeta: %s: not vegeta results", path)
	}
	var out []vegeta.Result
	for {
		var r vegeta.Result
		if err := dec.Decode(&r); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, fmt.Errorf("--vegeta: %s: %w", path, err)
		}
		out = append(out, r)
	}
}
