package gate

import (
	"bufio"
	"bytes"
	"debug/buildinfo"
	"fmt"
	"os"
	"runtime"
	"strings"

	"golang.org/x/sys/unix"
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

// cpuModel reads the first "model name" (x86) or a "CPU part"-style line
// (arm64) from /proc/cpuinfo.
func cpuModel() string {
	data, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown (" + runtime.GOARCH + ")"
	}
	return parseCPUModel(data, runtime.GOARCH)
}

func parseCPUModel(cpuinfo []byte, arch string) string {
	var fallback string
	sc := bufio.NewScanner(bytes.NewReader(cpuinfo))
	for sc.Scan() {
		key, value, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		key, value = strings.TrimSpace(key), strings.TrimSpace(value)
		switch key {
		case "model name", "Model":
			if value != "" {
				return value
			}
		case "CPU implementer", "CPU part":
			if fallback == "" || key == "CPU part" {
				fallback = strings.TrimSpace(fallback + " " + key + " " + value)
			}
		}
	}
	if fallback != "" {
		return arch + " " + fallback
	}
	return "unknown (" + arch + ")"
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
