package gate

import (
	"debug/buildinfo"
	"fmt"
	"os"
	"runtime"

	"golang.org/x/sys/unix"

	"weaseldb/internal/procstat"
)

// Machine identifies where a measurement was taken. A baseline is only
// comparable on the same CPU model with the same number of usable cores;
// kernel and Go version differences are reported as warnings.
type Machine struct {
	CPUModel  string `json:"cpu_model"`
	Cores     int    `json:"cores"` // CPUs this process may run on
	Kernel    string `json:"kernel"`
	GoVersion string `json:"go_version"` // the server binary's Go, else the gate's
	Hostname  string `json:"hostname"`   // informational: containers rename hosts
}

// ThisMachine describes the current machine; serverBinary (optional) gives
// the Go version the server was built with.
func ThisMachine(serverBinary string) Machine {
	m := Machine{CPUModel: cpuModel(), Cores: runtime.NumCPU(), GoVersion: runtime.Version()}
	var u unix.Utsname
	if err := unix.Uname(&u); err == nil {
		m.Kernel = unix.ByteSliceToString(u.Release[:])
	}
	if serverBinary != "" {
		if bi, err := buildinfo.ReadFile(serverBinary); err == nil {
			m.GoVersion = bi.GoVersion
		}
	}
	m.Hostname, _ = os.Hostname()
	return m
}

// cpuModel is the first CPU's model as internal/procstat reads it (x86's
// "model name", arm64's implementer and part named as lscpu names them),
// or "unknown (GOARCH)": a baseline recorded without a name still compares
// equal only with one from the same architecture.
func cpuModel() string {
	if m := procstat.CPUModel(); m != "" {
		return m
	}
	return "unknown (" + runtime.GOARCH + ")"
}

// Compare returns the reasons m (where the baseline was measured) is a
// different machine from now, and the differences that only warrant a
// warning.
func (m Machine) Compare(now Machine) (different, warnings []string) {
	if m.CPUModel != now.CPUModel {
		different = append(different, fmt.Sprintf("CPU %q, now %q", m.CPUModel, now.CPUModel))
	}
	if m.Cores != now.Cores {
		different = append(different, fmt.Sprintf("%d cores, now %d", m.Cores, now.Cores))
	}
	if m.Kernel != now.Kernel {
		warnings = append(warnings, fmt.Sprintf("baseline kernel %s, now %s", m.Kernel, now.Kernel))
	}
	if m.GoVersion != now.GoVersion {
		warnings = append(warnings, fmt.Sprintf("baseline built with %s, now %s", m.GoVersion, now.GoVersion))
	}
	return different, warnings
}
