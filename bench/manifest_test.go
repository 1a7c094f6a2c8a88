package bench

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"weaseldb/artifacts"
)

func TestParseSteps(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    []artifacts.Step
		wantErr string
	}{
		{"empty", "", nil, ""},
		{"two steps", "build\t0\t3.2\tmake build\nload\t1\t20.5\tbuild/load_tester --duration 20\n",
			[]artifacts.Step{{Name: "build", Command: "make build", ExitCode: 0, WallS: 3.2}, {Name: "load", Command: "build/load_tester --duration 20", ExitCode: 1, WallS: 20.5}}, ""},
		{"tab in command", "x\t0\t1\ta\tb", []artifacts.Step{{Name: "x", Command: "a\tb", WallS: 1}}, ""},
		{"too few fields", "build\t0\tmake", nil, "want 4 tab-separated fields"},
		{"bad exit", "build\tzero\t1\tmake", nil, "exit code"},
		{"bad wall", "build\t0\tlong\tmake", nil, "wall time"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseSteps("steps.tsv", []byte(tt.in))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %d steps, want %d", len(got), len(tt.want))
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Errorf("step %d = %+v, want %+v", i, got[i], tt.want[i])
				}
			}
		})
	}
}

func FuzzParseSteps(f *testing.F) {
	f.Add("build\t0\t3.2\tmake build\n")
	f.Add("\n\n\t\t\t\n")
	f.Fuzz(func(t *testing.T, in string) {
		steps, err := parseSteps("fuzz", []byte(in))
		if err == nil {
			for _, s := range steps {
				if strings.Contains(s.Name, "\t") {
					t.Fatalf("step name %q holds a tab", s.Name)
				}
			}
		}
	})
}

func TestBuildManifest(t *testing.T) {
	dir := t.TempDir()
	steps := filepath.Join(dir, "steps.tsv")
	if err := os.WriteFile(steps, []byte("build\t0\t1.5\tmake build\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := BuildManifest(ManifestOptions{Config: "../testdata/test_benchmark_config.toml", ConfigSource: "src.toml",
		Steps: steps, DurationS: 18, Quick: true, Nofile: "65536", StartedAt: "2026-12-01T00:00:00Z"})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Steps) != 1 || m.Steps[0].Command != "make build" || !m.Quick || m.DurationS != 18 || m.Config.Source != "src.toml" || m.Machine.Cores < 1 {
		t.Errorf("manifest = %+v", m)
	}
	if _, ok := m.Config.Values["server"]; !ok {
		t.Errorf("config values lack [server]: %v", m.Config.Values)
	}
	if m.Source != nil {
		t.Errorf("no revision given, yet a source record: %+v", m.Source)
	}
	// The source revision and build command, and the run's absolute paths.
	out, err := WriteManifest(dir, "", ManifestOptions{Config: "../testdata/test_benchmark_config.toml", Steps: steps,
		Revision: "0123abcd", Describe: "0123abcd-dirty", Dirty: true, BuildCommand: "make build BUILD_DIR=build", Root: "/src/wdb"})
	if err != nil {
		t.Fatal(err)
	}
	var got artifacts.Manifest
	if b, err := os.ReadFile(out); err != nil || json.Unmarshal(b, &got) != nil {
		t.Fatalf("read back %s: %v", out, err)
	}
	want := artifacts.SourceRecord{Revision: "0123abcd", Describe: "0123abcd-dirty", Dirty: true, BuildCommand: "make build BUILD_DIR=build"}
	if got.Source == nil || *got.Source != want || got.RunDir != dir || got.Root != "/src/wdb" {
		t.Errorf("manifest source %+v, run_dir %q, root %q", got.Source, got.RunDir, got.Root)
	}
	if _, err := BuildManifest(ManifestOptions{Config: filepath.Join(dir, "missing.toml"), Steps: steps}); err == nil || !strings.Contains(err.Error(), "missing.toml") {
		t.Errorf("missing config: %v", err)
	}
	if _, err := BuildManifest(ManifestOptions{Config: "../testdata/test_benchmark_config.toml", Steps: filepath.Join(dir, "none.tsv")}); err == nil {
		t.Error("missing steps accepted")
	}
}

func TestDescribeMachine(t *testing.T) {
	m := DescribeMachine()
	if m.Cores != runtime.NumCPU() || m.GOMAXPROCS < 1 || m.GoVersion != runtime.Version() || m.OS != runtime.GOOS {
		t.Errorf("DescribeMachine = %+v", m)
	}
	if runtime.GOOS == "linux" && !strings.HasPrefix(m.Kernel, "Linux ") {
		t.Errorf("kernel = %q", m.Kernel)
	}
}
