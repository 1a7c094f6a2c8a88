package reports

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestParseSteps(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    []Step
		wantErr string
	}{
		{"empty", "", nil, ""},
		{"two steps", "build\t0\t3.2\tmake build\nload\t1\t20.5\tbuild/load_tester --duration 20\n",
			[]Step{{Name: "build", Command: "make build", ExitCode: 0, WallS: 3.2}, {Name: "load", Command: "build/load_tester --duration 20", ExitCode: 1, WallS: 20.5}}, ""},
		{"tab in command", "x\t0\t1\ta\tb", []Step{{Name: "x", Command: "a\tb", WallS: 1}}, ""},
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

func TestAdjustConfig(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.toml")
	src := `[server]
interfaces = [
  { type = "tcp", address = "0.0.0.0", port = 8123 },
  { type = "unix", path = "weaseldb.sock" },
]
io_threads = 8
[benchmark]
ok_resolve_iterations = 4000
`
	if err := os.WriteFile(in, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out.toml")
	if err := AdjustConfig(in, out, ConfigAdjustment{TCPAddress: "127.0.0.1", TCPPort: 18123}); err != nil {
		t.Fatal(err)
	}
	rec, err := ReadConfigRecord(out)
	if err != nil {
		t.Fatal(err)
	}
	ifaces := tables(rec.Values["server"].(map[string]any)["interfaces"])
	if len(ifaces) != 2 {
		t.Fatalf("interfaces = %v", ifaces)
	}
	if ifaces[0]["address"] != "127.0.0.1" || ifaces[0]["port"] != int64(18123) {
		t.Errorf("tcp interface not adjusted: %v", ifaces[0])
	}
	if ifaces[1]["path"] != "weaseldb.sock" {
		t.Errorf("unix interface changed: %v", ifaces[1])
	}
	if n, _ := LookupNumber(map[string]any{"v": float64(rec.Values["benchmark"].(map[string]any)["ok_resolve_iterations"].(int64))}, "v"); n != 4000 {
		t.Errorf("other keys changed: %v", rec.Values)
	}

	if err := os.WriteFile(in, []byte("[server\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := AdjustConfig(in, out, ConfigAdjustment{}); err == nil || !strings.Contains(err.Error(), "in.toml") {
		t.Errorf("bad TOML: error %v, want one naming the file", err)
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
