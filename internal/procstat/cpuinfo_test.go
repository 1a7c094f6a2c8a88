package procstat

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Recorded /proc/cpuinfo texts (testdata) and small ones: the name and how
// it was found, whatever the architecture of the machine running the test.
func TestParseCPUName(t *testing.T) {
	tests := []struct {
		name, file, text string
		want, source     string // source: a part of Source
	}{
		{name: "amd64, recorded", file: "cpuinfo_amd64_epyc.txt", want: "AMD EPYC", source: `"model name"`},
		{name: "x86", text: "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) CPU @ 2.20GHz\n",
			want: "Intel(R) Xeon(R) CPU @ 2.20GHz", source: `"model name"`},
		{name: "arm64 Graviton2, recorded", file: "cpuinfo_arm64_graviton2.txt", want: "ARM Neoverse-N1",
			source: `"CPU implementer" 0x41 and "CPU part" 0xd0c in /proc/cpuinfo, named as lscpu names them`},
		{name: "arm64 Grace, recorded", file: "cpuinfo_arm64_grace.txt", want: "ARM Neoverse-V2", source: `"CPU part" 0xd4f`},
		{name: "arm64 Raspberry Pi 4: the CPU before the board", file: "cpuinfo_arm64_raspberrypi4.txt", want: "ARM Cortex-A72", source: `"CPU part" 0xd08`},
		{name: "arm64, a part lscpu's table lacks here", text: "processor\t: 0\nCPU implementer\t: 0x41\nCPU part\t: 0xd99\n",
			want: "ARM part 0xd99", source: `"CPU part" 0xd99`},
		{name: "arm64, an unknown implementer", text: "CPU implementer\t: 0x99\nCPU part\t: 0x1\n",
			want: "implementer 0x99 part 0x001", source: `"CPU implementer" 0x99`},
		{name: "arm64, numbers that are not", text: "CPU implementer\t: ?\nCPU part\t: x\n", want: "implementer ? part x", source: "implementer"},
		{name: "the board alone", text: "processor\t: 0\nModel\t\t: Some Board\n", want: "Some Board", source: `"Model"`},
		{name: "an empty model name is no name", text: "model name\t:\nCPU implementer\t: 0x41\nCPU part\t: 0xd0c\n", want: "ARM Neoverse-N1", source: "implementer"},
		{name: "nothing", text: ""},
		{name: "garbage", text: "garbage"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text := []byte(tt.text)
			if tt.file != "" {
				var err error
				if text, err = os.ReadFile(filepath.Join("testdata", tt.file)); err != nil {
					t.Fatal(err)
				}
			}
			got := parseCPUName(text)
			if got.Model != tt.want || !strings.Contains(got.Source, tt.source) || (got.Model == "") != (got.Source == "") {
				t.Errorf("%+v, want model %q from %q", got, tt.want, tt.source)
			}
		})
	}
}

func TestParseCPUFamily(t *testing.T) {
	for _, tt := range []struct{ name, file, text, want string }{
		{name: "amd64, recorded", file: "cpuinfo_amd64_epyc.txt", want: "26"},
		{name: "arm64, recorded", file: "cpuinfo_arm64_graviton2.txt", want: "8"},
		{name: "x86 without a family", text: "model name\t: Intel(R) Xeon(R)\n", want: ""},
		{name: "no model, no family", text: "cpu family\t: 6\n", want: ""},
	} {
		text := []byte(tt.text)
		if tt.file != "" {
			var err error
			if text, err = os.ReadFile(filepath.Join("testdata", tt.file)); err != nil {
				t.Fatal(err)
			}
		}
		if got := parseCPUName(text).Family; got != tt.want {
			t.Errorf("%s: family %q, want %q", tt.name, got, tt.want)
		}
	}
}

// The file is read from the root: a missing one is an error, one that
// names no CPU is not.
func TestCPUNameFromRoot(t *testing.T) {
	if n, err := fakeProc(t, map[string]string{"cpuinfo": "model name\t: AMD EPYC 7B13\n"}).cpuName(); err != nil || n.Model != "AMD EPYC 7B13" {
		t.Errorf("cpuName = %+v, %v", n, err)
	}
	if n, err := fakeProc(t, map[string]string{"cpuinfo": "garbage"}).cpuName(); err != nil || n != (CPUName{}) {
		t.Errorf("a garbled cpuinfo: %+v, %v; want no name, no error", n, err)
	}
	if _, err := fakeProc(t, nil).cpuName(); err == nil {
		t.Error("no cpuinfo: no error")
	}
}
