package reports

import (
	"fmt"
	"path/filepath"
	"strings"

	"weaseldb/artifacts"
	"weaseldb/internal/jsonfile"
)

// RenderOptions say where `report --run DIR` writes.
type RenderOptions struct {
	RunDir string
	// Out is the report's path; a functional run (virtual CPUs) goes to
	// RunDir/FunctionalReportFile instead unless OutSet says Out was given.
	Out    string
	OutSet bool
	Images string // image directory, relative to the report's directory
	// HTML: also write the report's HTML twin beside it (HTMLPath).
	HTML bool
}

// Render reads a run directory and writes its report: a performance report,
// or a functional check when the run's CPUs were virtual. It returns the
// line that says what it wrote. A functional check that failed, or a run
// with artifacts that could not be read, is an error after the report is
// written (the report says so at its top).
func Render(o RenderOptions) (string, error) {
	r, err := LoadRun(o.RunDir)
	if err != nil {
		return "", err
	}
	if r.IsFunctional() {
		return renderFunctional(r, o)
	}
	cmd := fmt.Sprintf("report --run %s --out %s", o.RunDir, o.Out)
	res, err := Generate(r, Options{OutPath: o.Out, ImageDir: o.Images, Command: cmd})
	if err != nil {
		return "", err
	}
	line := fmt.Sprintf("report: wrote %s (%d figures, %d plots)", res.Markdown, len(res.Figures), len(res.Images))
	if line, err = writeTwin(o, res.Markdown, line); err != nil {
		return line, err
	}
	if n := len(r.Unreadable); n > 0 {
		// A run with damaged artifacts is not a clean result.
		return line, fmt.Errorf("%d artifact(s) of %s could not be read and are left out of the report: %s", n, o.RunDir, strings.Join(r.Unreadable, "; "))
	}
	return line, nil
}

// writeTwin writes the HTML twin of the markdown at md when asked, adding
// it to the line that says what was written.
func writeTwin(o RenderOptions, md, line string) (string, error) {
	if !o.HTML {
		return line, nil
	}
	twin := HTMLPath(md)
	if err := WriteHTML(md, twin); err != nil {
		return line, err
	}
	return line + " and its HTML twin " + twin, nil
}

// renderFunctional renders a run whose CPUs were virtual as a functional
// check.
func renderFunctional(r *Run, o RenderOptions) (string, error) {
	out := o.Out
	if !o.OutSet {
		out = filepath.Join(o.RunDir, FunctionalReportFile)
	}
	res, cs, err := GenerateFunctional(r, Options{OutPath: out, Command: fmt.Sprintf("report --run %s --out %s", o.RunDir, out)})
	if err != nil {
		return "", err
	}
	line := fmt.Sprintf("report: wrote %s: a functional check (the run's CPUs were virtual), %s", res.Markdown, cs.Summary)
	if line, err = writeTwin(o, res.Markdown, line); err != nil {
		return line, err
	}
	if !cs.Passed {
		return line, fmt.Errorf("%s: %s", o.RunDir, cs.Summary)
	}
	return line, nil
}

// WriteChecks checks a run directory against its plan (CheckRun) and writes
// the checks to out (default RunDir/checks.json); it returns them and the
// path written.
func WriteChecks(runDir, out string, o CheckOptions) (*artifacts.Checks, string, error) {
	r, err := LoadRun(runDir)
	if err != nil {
		return nil, "", err
	}
	cs := CheckRun(r, o)
	if out == "" {
		out = filepath.Join(runDir, artifacts.ChecksFile)
	}
	if err := jsonfile.WriteFile(out, cs); err != nil {
		return nil, "", err
	}
	return cs, out, nil
}
