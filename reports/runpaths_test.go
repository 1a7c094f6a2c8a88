package reports

import (
	"strings"
	"testing"

	"weaseldb/artifacts"
)

// A run's recorded absolute paths are shown relative to where the run is
// when the report is rendered: from the manifest's run_dir and root, or,
// for an older manifest, from the config's directory under reports/runs/.
func TestRelocatedPaths(t *testing.T) {
	for _, tc := range []struct {
		name string
		m    artifacts.Manifest
		dir  string
		in   string
		want string
	}{
		{"recorded run_dir and root", artifacts.Manifest{RunDir: "/src/wdb/reports/runs/T1", Root: "/src/wdb"},
			"reports/published/T1", "/src/wdb/build/report setups --run /src/wdb/reports/runs/T1 --bin /src/wdb/build",
			"build/report setups --run reports/published/T1 --bin build"},
		{"older manifest: inferred from the config path", artifacts.Manifest{Config: artifacts.ConfigRecord{Path: "/work/x/reports/runs/T2/setup_seed.toml"}},
			"reports/published/T2", "env RUN_DIR=/work/x/reports/runs/T2 BUILD_DIR=/work/x/build scripts/rate_curve.sh",
			"env RUN_DIR=reports/published/T2 BUILD_DIR=build scripts/rate_curve.sh"},
		{"run outside reports/runs: the root is unknown", artifacts.Manifest{Config: artifacts.ConfigRecord{Path: "/tmp/fixrun/setup_seed.toml"}},
			"testdata/setups_run", "/opt/build/weaseldb --config /tmp/fixrun/setup_seed.toml",
			"/opt/build/weaseldb --config testdata/setups_run/setup_seed.toml"},
		{"relative config: nothing to rewrite", artifacts.Manifest{Config: artifacts.ConfigRecord{Path: "weaseldb.toml"}},
			"run", "build/report manifest --run run", "build/report manifest --run run"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &Run{Dir: tc.dir, Manifest: tc.m}
			if got := r.relocated(tc.in); got != tc.want {
				t.Errorf("relocated(%q)\n got %q\nwant %q", tc.in, got, tc.want)
			}
		})
	}
}

// The Test Configuration table names the source revision (dirty or clean)
// and the build command, or says the run did not record them.
func TestSourceRows(t *testing.T) {
	for _, tc := range []struct {
		name string
		src  *artifacts.SourceRecord
		want []string
	}{
		{"clean", &artifacts.SourceRecord{Revision: "0123abcd", Describe: "v0.3-2-g0123abcd", BuildCommand: "make build BUILD_DIR=build"},
			[]string{"| source revision | `0123abcd` (`v0.3-2-g0123abcd`), clean work tree |", "| build | `make build BUILD_DIR=build` |"}},
		{"dirty", &artifacts.SourceRecord{Revision: "0123abcd", Describe: "0123abcd-dirty", Dirty: true, BuildCommand: "none (SKIP_BUILD=1)"},
			[]string{"**dirty** work tree", "`0123abcd-dirty`", "| build | `none (SKIP_BUILD=1)` |"}},
		{"not recorded", nil, []string{"| source revision | not recorded"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := &writer{run: &Run{Manifest: artifacts.Manifest{Source: tc.src}}}
			w.sourceRows()
			for _, want := range tc.want {
				if !strings.Contains(w.out.String(), want) {
					t.Errorf("rows lack %q:\n%s", want, w.out.String())
				}
			}
		})
	}
}
