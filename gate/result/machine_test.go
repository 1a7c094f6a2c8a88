package result

import "testing"

func TestMachineCompare(t *testing.T) {
	base := Machine{CPUModel: "X", Cores: 2, Kernel: "6.1", GoVersion: "go1.26.8"}
	tests := []struct {
		name           string
		now            Machine
		diffs, warning int
	}{
		{"same", base, 0, 0},
		{"other CPU", Machine{CPUModel: "Y", Cores: 2, Kernel: "6.1", GoVersion: "go1.26.8"}, 1, 0},
		{"more cores", Machine{CPUModel: "X", Cores: 8, Kernel: "6.1", GoVersion: "go1.26.8"}, 1, 0},
		{"kernel and Go only warn", Machine{CPUModel: "X", Cores: 2, Kernel: "6.8", GoVersion: "go1.27"}, 0, 2},
	}
	for _, tt := range tests {
		d, w := base.Compare(tt.now)
		if len(d) != tt.diffs || len(w) != tt.warning {
			t.Errorf("%s: differences %v, warnings %v", tt.name, d, w)
		}
	}
}

func TestSettingsDifferences(t *testing.T) {
	s := Settings{Network: "unix", DurationS: 1, WarmupS: 0.25, Concurrency: 64, Threads: 1, Path: "/ok", ConfigSHA256: "abc"}
	if d := s.Differences(s); len(d) != 0 {
		t.Errorf("same settings differ: %v", d)
	}
	o := s
	o.Concurrency, o.ConfigSHA256, o.LoadArgs = 32, "def", []string{"--pipeline", "4"}
	o.ServerCPUs, o.ClientCPUs = "0", "1"
	if d := s.Differences(o); len(d) != 4 {
		t.Errorf("want 4 differences, got %v", d)
	}
}
