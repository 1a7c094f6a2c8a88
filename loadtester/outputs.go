package loadtester

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"weaseldb/loadtester/result"
	"weaseldb/loadtester/result/vegetafile"
)

// The files a run leaves beside its Result: the writers of the JSON result,
// the vegeta results and the HdrHistogram interval log, for one run, for
// rate steps and for a merge. Errors name each file by the flag that asks
// for it (--json, --vegeta, --hdr-log), as load_tester and the docs do.

// Outputs are the files to write; an empty path is not written.
type Outputs struct {
	JSON   string // the versioned JSON result (WriteJSON), or the steps document (WriteSteps)
	Vegeta string // the per-request results in vegeta's format (one run only)
	HDRLog string // the interval log; with steps, one per step (StepLogPath)
}

// RunWithOutputs runs cfg and writes out. The HDR log is created first, so
// a path that cannot be written fails before any load, and is streamed as
// the run goes, so a process killed mid-run keeps what it measured; the
// vegeta file and the JSON are written once the result is final. A run
// interrupted while waiting for StartAt still writes them (every count 0,
// "interrupted": true), so a file an earlier run left there is never taken
// for this one's; its error is returned after. notes hears where the
// vegeta results went (nil: nobody).
func RunWithOutputs(ctx context.Context, cfg Config, out Outputs, notes io.Writer) (*result.Result, error) {
	var hdrFile *os.File
	var hdrLog *result.HDRLog
	if out.HDRLog != "" {
		f, err := os.Create(out.HDRLog)
		if err != nil {
			return nil, fmt.Errorf("--hdr-log: %w", err)
		}
		hdrFile, hdrLog = f, result.NewHDRLog(f)
		cfg.OnInterval = hdrLog.Interval
	}
	res, runErr := Run(ctx, cfg)
	if res == nil {
		if hdrFile != nil {
			hdrFile.Close()
		}
		return nil, runErr
	}
	if hdrLog != nil {
		err := hdrLog.Finish(res)
		if cerr := hdrFile.Close(); err == nil {
			err = cerr
		}
		if err != nil { // what was measured stands: the result says the log is not whole
			res.Warnings = append(res.Warnings, fmt.Sprintf("--hdr-log: %v", err))
		}
	}
	if err := writeResultOutputs(res, out, cfg.VegetaMax, notes); err != nil {
		return res, err
	}
	return res, runErr
}

// writeResultOutputs writes the vegeta file, then the JSON (which names it).
func writeResultOutputs(res *result.Result, out Outputs, vegetaMax int, notes io.Writer) error {
	if out.Vegeta != "" {
		res.VegetaFile = out.Vegeta
		if err := writeFile(out.Vegeta, "--vegeta", func(w io.Writer) error { return vegetafile.WriteVegeta(w, res) }); err != nil {
			return err
		}
		if notes != nil {
			fmt.Fprintln(notes, vegetaNote(res, out.Vegeta, vegetaMax))
		}
	}
	if out.JSON != "" {
		return WriteJSONFile(out.JSON, res)
	}
	return nil
}

// WriteJSONFile writes res to path as the versioned JSON result.
func WriteJSONFile(path string, res *result.Result) error {
	var buf bytes.Buffer
	if err := result.WriteJSON(&buf, res); err != nil {
		return err
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("write --json: %w", err)
	}
	return nil
}

// WriteHDRLogFile writes res's intervals to path as an HdrHistogram log.
func WriteHDRLogFile(path string, res *result.Result) error {
	return writeFile(path, "--hdr-log", func(w io.Writer) error { return result.WriteHDRLog(w, res) })
}

// vegetaNote says how many results went to the vegeta file, and how they
// were sampled.
func vegetaNote(res *result.Result, path string, vegetaMax int) string {
	kept, of := res.VegetaKept()
	if res.VegetaSampleEvery <= 1 {
		return fmt.Sprintf("vegeta: wrote all %d results to %s", kept, path)
	}
	return fmt.Sprintf("vegeta: wrote %d of %d results to %s: every %d-th result of each network thread, evenly spaced over the run (--vegeta-max %d)",
		kept, of, path, res.VegetaSampleEvery, vegetaMax)
}

// writeFile creates path and writes it with write; errors name the flag.
func writeFile(path, flagName string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("%s: %w", flagName, err)
	}
	if err := write(f); err != nil {
		f.Close() // the write's failure is the one to report
		return fmt.Errorf("%s: %w", flagName, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("%s: %w", flagName, err)
	}
	return nil
}

// StepLogPath is step n's HDR log: FILE.hlog becomes FILE.step3.hlog.
func StepLogPath(path string, n int) string {
	ext := filepath.Ext(path)
	return fmt.Sprintf("%s.step%d%s", strings.TrimSuffix(path, ext), n, ext)
}

// RunStepsWithOutputs runs the steps with run (RunSteps or FindRateSteps
// over sr) and writes their outputs: the JSON document, rewritten after
// every step so that a run stopped half-way keeps its finished steps, and
// one HDR log per step. Outputs that cannot be written fail before any
// load, as for a single run. lines hears a line before and after each step
// and the table at the end; progress, when not nil, each step's progress.
// The result is nil only when no step could start.
func RunStepsWithOutputs(ctx context.Context, sr *StepRunner, run func(context.Context, *StepRunner) (*result.StepsResult, error),
	out Outputs, lines, progress io.Writer) (*result.StepsResult, error) {
	var hdrFile *os.File
	var hdrLog *result.HDRLog
	var writeErr error
	if out.JSON != "" {
		if err := writeStepsFile(out.JSON, sr.Document()); err != nil {
			return nil, err
		}
	}
	if out.HDRLog != "" {
		f, err := os.Create(StepLogPath(out.HDRLog, 1))
		if err != nil {
			return nil, fmt.Errorf("--hdr-log: %w", err)
		}
		f.Close()
	}
	sr.Before = func(n int, rate float64, cfg *Config) {
		fmt.Fprintf(lines, "step %d: --rate %g (warm-up %v, measured %v)\n", n, rate, cfg.Warmup, cfg.Duration)
		if progress != nil {
			cfg.Progress = progress
		}
		if out.HDRLog == "" {
			return
		}
		f, err := os.Create(StepLogPath(out.HDRLog, n))
		if err != nil {
			writeErr = fmt.Errorf("--hdr-log: %w", err)
			return
		}
		hdrFile, hdrLog = f, result.NewHDRLog(f)
		cfg.OnInterval = hdrLog.Interval
	}
	sr.After = func(n int, st *result.Step) error {
		fmt.Fprintln(lines, st.Line())
		if hdrLog != nil {
			err := hdrLog.Finish(st.Result)
			if cerr := hdrFile.Close(); err == nil {
				err = cerr
			}
			hdrFile, hdrLog = nil, nil
			if err != nil {
				return fmt.Errorf("--hdr-log: %w", err)
			}
			st.HDRLog = StepLogPath(out.HDRLog, n)
		}
		if writeErr != nil {
			return writeErr
		}
		if out.JSON != "" { // after every step: a run stopped later keeps these
			doc := sr.Document()
			doc.Steps = append(doc.Steps, *st)
			return writeStepsFile(out.JSON, doc)
		}
		return nil
	}
	res, err := run(ctx, sr)
	if hdrFile != nil { // a step that never ran
		hdrFile.Close()
	}
	if res == nil {
		return nil, err
	}
	result.PrintSteps(lines, res)
	if out.JSON != "" {
		if werr := writeStepsFile(out.JSON, res); werr != nil && err == nil {
			err = werr
		}
	}
	return res, err
}

// writeStepsFile writes the steps document to path.
func writeStepsFile(path string, doc *result.StepsResult) error {
	return writeFile(path, "--json", func(w io.Writer) error { return result.WriteSteps(w, doc) })
}

// MergeVegetaFiles writes the merged instances' vegeta results as one
// attack to out: each instance's file where it wrote it, or under the same
// name beside its JSON (where collected files usually land).
func MergeVegetaFiles(out string, inputs []result.MergeInput) error {
	files := make([]string, len(inputs))
	for i, in := range inputs {
		path, err := vegetaFileOf(in)
		if err != nil {
			return err
		}
		files[i] = path
	}
	results, err := vegetafile.MergeVegeta(files)
	if err != nil {
		return fmt.Errorf("--vegeta: %w", err)
	}
	return writeFile(out, "--vegeta", func(w io.Writer) error { return vegetafile.EncodeVegeta(w, results) })
}

// vegetaFileOf finds an instance's vegeta results.
func vegetaFileOf(in result.MergeInput) (string, error) {
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
