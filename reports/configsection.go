package reports

import (
	"fmt"

	"weaseldb/artifacts"
)

func (w *writer) testConfiguration() error {
	m := w.run.Manifest
	w.p("## Test Configuration\n\n")
	w.p("Machine (`%s` machine):\n\n| | |\n|---|---|\n", artifacts.ManifestFile)
	w.p("| CPU | %s |\n| cores | %d |\n| kernel | %s |\n| Go | %s |\n| GOMAXPROCS (default here) | %d |\n", orNA(m.Machine.CPUModel), m.Machine.Cores,
		orNA(m.Machine.Kernel), orNA(m.Machine.GoVersion), m.Machine.GOMAXPROCS)
	if ss := w.run.Setups; ss != nil {
		w.p("| allowed CPUs (sched_getaffinity) | %s |\n", ss.AllowedCPUs)
	}
	for _, n := range w.setups {
		if r := n.median; r != nil && r.Sample != nil && r.Sample.GOMAXPROCS > 0 {
			w.p("| GOMAXPROCS (%s's server, from its log) | %d |\n", n.view.Setup.Title, r.Sample.GOMAXPROCS)
		}
	}
	if m.ServerGOMAXPROCS != "" {
		w.p("| GOMAXPROCS (the server's, from its log) | %s |\n", m.ServerGOMAXPROCS)
	}
	w.p("| OS/arch | %s/%s |\n", orNA(m.Machine.OS), orNA(m.Machine.Arch))
	w.sourceRows()
	if m.NofileLimit != "" {
		w.p("| open files limit | %s |\n", m.NofileLimit)
	}
	w.p("\nServer config `%s`", orNA(w.run.relocated(m.Config.Path)))
	if m.Config.Source != "" {
		w.p(", a copy of `%s` with a unix socket as its only listener", m.Config.Source)
	}
	w.p(" (`%s` config.values)", artifacts.ManifestFile)
	if len(w.setups) > 1 {
		w.p("; the fitted setup's servers read the same config with the keys its rule sets (`io_threads`, `pipeline_release_threads`, `pipeline_wait_strategy`, and `io_cpus` and `pipeline_cpus` on dedicated cores) changed, in `%s`", w.setups[1].view.Setup.Config)
	}
	w.p(":\n\n| key | value |\n|---|---|\n")
	for _, section := range sortedKeys(m.Config.Values) {
		if table, ok := m.Config.Values[section].(map[string]any); ok {
			for _, k := range sortedKeys(table) {
				w.p("| %s.%s | %s |\n", section, k, formatAny(table[k]))
			}
		} else {
			w.p("| %s | %s |\n", section, formatAny(m.Config.Values[section]))
		}
	}
	for _, n := range w.setups {
		r := n.median
		if r == nil {
			continue
		}
		cfg, _ := r.Load.Config.(map[string]any)
		w.p("\nLoad tester flags of %s (`%s` config):\n\n| flag | value |\n|---|---|\n", n.view.Setup.Title, r.LoadName)
		for _, k := range sortedKeys(cfg) {
			w.p("| %s | %s |\n", k, formatAny(cfg[k]))
		}
	}
	w.p("\nCommands, in order, with exit status and wall time (`%s` steps):\n\n```\n", artifacts.ManifestFile)
	for _, s := range m.Steps {
		w.p("# %s: exit %d, %.1f s\n%s\n", s.Name, s.ExitCode, s.WallS, w.run.relocated(s.Command))
	}
	w.p("```\n\n")
	if m.ServerExitCode != nil {
		w.p("The server exited with status %d after SIGTERM.\n\n", *m.ServerExitCode)
	}
	return nil
}

// sourceRows name the source revision the binaries were built from and
// the command that built them (manifest.json source).
func (w *writer) sourceRows() { w.p("%s", sourceRows(w.run.Manifest.Source)) }

// sourceRows are the table rows of a run's source record, or one row
// saying the run did not record it.
func sourceRows(src *artifacts.SourceRecord) string {
	if src == nil {
		return "| source revision | not recorded (the run predates the manifest's `source`) |\n"
	}
	state := "clean work tree"
	if src.Dirty {
		state = "**dirty** work tree: uncommitted changes were built in"
	}
	rev := fmt.Sprintf("`%s`", src.Revision)
	if src.Describe != "" && src.Describe != src.Revision {
		rev += fmt.Sprintf(" (`%s`)", src.Describe)
	}
	return fmt.Sprintf("| source revision | %s, %s |\n| build | `%s` |\n", rev, state, orNA(src.BuildCommand))
}

func (w *writer) sources() error {
	w.p("## Sources\n\n")
	w.p("Every figure above, by its number. Field is a JSON path into the artifact (× a unit scale where the report changes units); derived figures give their formula; the seed's figures quote %s.\n\n", seedReportReference)
	w.p("| # | figure | value | artifact | field |\n|---|---|---|---|---|\n")
	for _, f := range w.book.list {
		field := "`" + f.Field + "`"
		if f.Derived || f.Artifact == seedArtifact {
			field = f.Field
		} else if f.Scale != 1 {
			field += fmt.Sprintf(" × %g", f.Scale)
		}
		w.p("| %d | %s | %s | %s | %s |\n", f.ID, f.Name, f.Text, f.Artifact, field)
	}
	w.p("\n")
	return nil
}
