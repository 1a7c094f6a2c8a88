package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"

	"weaseldb/loadtester"
)

// runLoad runs the load and writes the outputs asked for. The HDR log is
// created first, so a path that cannot be written fails the command before
// any load, and is streamed as the run goes, so a process killed mid-run
// keeps what it measured; --vegeta and --json are written once the result
// is final. A run interrupted while waiting for --start-at still writes
// them (every count 0, "interrupted": true), so a file an earlier run left
// there is never taken for this one's; its error is returned after.
func runLoad(ctx context.Context, o options, stdout io.Writer) (*loadtester.Result, error) {
	cfg := o.cfg
	if !o.quiet {
		cfg.Progress = stdout
	}
	var hdrFile *os.File
	var hdrLog *loadtester.HDRLog
	if o.hdrLog != "" {
		f, err := os.Create(o.hdrLog)
		if err != nil {
			return nil, fmt.Errorf("--hdr-log: %w", err)
		}
		hdrFile, hdrLog = f, loadtester.NewHDRLog(f)
		cfg.OnInterval = hdrLog.Interval
	}
	res, runErr := loadtester.Run(ctx, cfg)
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
	if err := writeOutputs(res, o, stdout); err != nil {
		return res, err
	}
	return res, runErr
}

// writeOutputs writes --vegeta, then --json (which names the vegeta file).
func writeOutputs(res *loadtester.Result, o options, stdout io.Writer) error {
	if o.vegeta != "" {
		res.VegetaFile = o.vegeta
		if err := writeFile(o.vegeta, "--vegeta", func(w io.Writer) error { return loadtester.WriteVegeta(w, res) }); err != nil {
			return err
		}
		if !o.quiet {
			fmt.Fprintln(stdout, vegetaNote(res, o))
		}
	}
	if o.jsonPath != "" {
		return writeJSON(o.jsonPath, res)
	}
	return nil
}

// writeJSON writes res to path as the versioned JSON result.
func writeJSON(path string, res *loadtester.Result) error {
	var buf bytes.Buffer
	if err := loadtester.WriteJSON(&buf, res); err != nil {
		return err
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("write --json: %w", err)
	}
	return nil
}

// vegetaNote says how many results went to --vegeta, and how they were
// sampled.
func vegetaNote(res *loadtester.Result, o options) string {
	kept, of := res.VegetaKept()
	if res.VegetaSampleEvery <= 1 {
		return fmt.Sprintf("vegeta: wrote all %d results to %s", kept, o.vegeta)
	}
	return fmt.Sprintf("vegeta: wrote %d of %d results to %s: every %d-th result of each network thread, evenly spaced over the run (--vegeta-max %d)",
		kept, of, o.vegeta, res.VegetaSampleEvery, o.vegetaMax)
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
