package reports

import (
	"path/filepath"
	"strings"
)

// Paths a run recorded are absolute and name where it ran
// (reports/runs/<time>, which git ignores); a published run is moved to
// reports/published/<time>. The report shows them relative to where the
// run is now, so a reader can open the config and rerun the commands from
// the repository root.

// recordedDirs are the run directory and the repository root as the run
// recorded them: the manifest's run_dir and root, or, for a manifest older
// than those fields, the config's directory (the script writes the config
// into the run directory) and the root above reports/runs/<name>.
func (r *Run) recordedDirs() (runDir, root string) {
	m := r.Manifest
	runDir, root = m.RunDir, m.Root
	if runDir == "" && filepath.IsAbs(m.Config.Path) {
		runDir = filepath.Dir(m.Config.Path)
	}
	if root == "" && runDir != "" {
		suffix := string(filepath.Separator) + filepath.Join("reports", "runs", filepath.Base(runDir))
		root = strings.TrimSuffix(runDir, suffix)
		if root == runDir {
			root = ""
		}
	}
	return runDir, root
}

// relocated rewrites a recorded path or command line: the recorded run
// directory becomes the directory the report was rendered from, and the
// recorded repository root is dropped (paths relative to it).
func (r *Run) relocated(s string) string {
	runDir, root := r.recordedDirs()
	shown := r.ShownDir
	if shown == "" {
		shown = r.Dir
	}
	if runDir != "" && shown != "" {
		s = strings.ReplaceAll(s, runDir, filepath.Clean(shown))
	}
	if root != "" {
		s = strings.ReplaceAll(s, root+string(filepath.Separator), "")
	}
	return s
}
