package gate

import (
	"debug/buildinfo"
	"os"
	"runtime"

	"golang.org/x/sys/unix"

	"weaseldb/gate/result"
	"weaseldb/internal/procstat"
)

// ThisMachine describes the current machine; serverBinary (optional) gives
// the Go version the server was built with.
func ThisMachine(serverBinary string) result.Machine {
	m := result.Machine{CPUModel: cpuModel(), Cores: runtime.NumCPU(), GoVersion: runtime.Version()}
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
