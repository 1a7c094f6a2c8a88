package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"weaseldb/loadtester/result"
	"weaseldb/runview"
)

// `load_tester html` and --html: the page of a result (package runview),
// read from files or from the run that has just ended.

const htmlUsage = `load_tester html: one self-contained HTML page of a result (docs/load_tester.md, "HTML view").

Usage: load_tester html RESULT.json... -o OUT.html

RESULT.json is a run's --json (a plain run, a merged one, or a
--rate-steps or --find-rate document). Several single-run results are
merged first, exactly as load_tester merge does. The page fetches nothing:
its charts are inline SVG, without any script. "-o -" writes it to stdout.
A file that is not a load_tester result, is truncated or holds an empty run
is refused in one line naming it (exit 1).

Flags:
`

// runHTML is the html subcommand; it returns the exit status.
func runHTML(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("load_tester html", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	out := fs.String("o", "", "write the page to `FILE` (- for stdout)")
	inputs, err := parseInterspersed(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, htmlUsage)
			fs.SetOutput(stdout)
			fs.PrintDefaults()
			return exitOK
		}
		fmt.Fprintf(stderr, "load_tester html: %s (see --help)\n", oneLine(err))
		return exitUsage
	}
	if len(inputs) == 0 || *out == "" {
		fmt.Fprintln(stderr, "load_tester html: want RESULT.json... -o OUT.html (see --help)")
		return exitUsage
	}
	page, err := pageOfFiles(inputs)
	if err == nil {
		err = writePage(*out, page, stdout)
	}
	if err != nil {
		fmt.Fprintf(stderr, "load_tester html: %s\n", oneLine(err))
		return exitFailure
	}
	return exitOK
}

// parseInterspersed parses fs from args where flags and files mix
// ("RESULT.json -o run.html"), returning the files in order.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var files []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return files, nil
		}
		files = append(files, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// pageOfFiles reads the results and makes their page: one steps document,
// one result, or several results merged.
func pageOfFiles(paths []string) (*runview.Page, error) {
	if len(paths) == 1 && isSteps(paths[0]) {
		sr, err := result.ReadSteps(paths[0])
		if err != nil {
			return nil, err
		}
		return filePage(paths[0], func() (*runview.Page, error) { return runview.StepsPage(sr, paths) })
	}
	inputs := make([]result.MergeInput, 0, len(paths))
	for _, p := range paths {
		if isSteps(p) {
			return nil, fmt.Errorf("%s: a rate-steps document is shown alone, not merged with other results", p)
		}
		r, err := result.ReadResult(p)
		if err != nil {
			return nil, err
		}
		if runview.Empty(r) {
			return nil, fmt.Errorf("%s: %w", p, runview.ErrEmpty)
		}
		inputs = append(inputs, result.MergeInput{Path: p, Result: r})
	}
	res := inputs[0].Result
	if len(inputs) > 1 {
		var err error
		if res, err = result.Merge(inputs); err != nil {
			return nil, fmt.Errorf("merge: %w", err)
		}
	}
	return filePage(paths[0], func() (*runview.Page, error) { return runview.ResultPage(res, paths) })
}

// filePage makes a page, an error naming the file it came from.
func filePage(path string, build func() (*runview.Page, error)) (*runview.Page, error) {
	p, err := build()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return p, nil
}

// isSteps tells whether path holds a rate-steps document (its "kind");
// anything else, unreadable included, is left to ReadResult to judge.
func isSteps(path string) bool {
	data, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	var head struct {
		Kind string `json:"kind"`
	}
	return json.Unmarshal(data, &head) == nil && head.Kind == result.StepsKind
}

// writePage writes page to path ("-": stdout), whole or not at all.
func writePage(path string, page *runview.Page, stdout io.Writer) error {
	var buf bytes.Buffer
	if err := page.Write(&buf); err != nil {
		return err
	}
	if path == "-" {
		_, err := stdout.Write(buf.Bytes())
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("write page: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write page: %w", err)
	}
	return nil
}

// checkWritable tells whether a file can be created at path, without
// leaving one: --html fails before any load, not after it.
func checkWritable(path string) error {
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	f.Close()
	return os.Remove(f.Name())
}

// writeRunPage writes the page of the run that has just ended (--html),
// naming the command that ran it. A page that cannot be made or written
// is said in one line on stderr; the run's own exit status stands, as its
// result was measured and its other outputs written.
func writeRunPage(path string, args []string, stderr io.Writer, build func() (*runview.Page, error)) {
	page, err := build()
	if err == nil {
		page.SetCommand(commandLine(args))
		err = writePage(path, page, nil)
	}
	if err != nil {
		fmt.Fprintf(stderr, "load_tester: --html: %s\n", oneLine(err))
	}
}

// commandLine is the command as a shell would take it back.
func commandLine(args []string) string {
	parts := []string{"load_tester"}
	for _, a := range args {
		if a == "" || strings.ContainsAny(a, " \t\n'\"\\$`&|;<>()*?[]{}!#~") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		parts = append(parts, a)
	}
	return strings.Join(parts, " ")
}
