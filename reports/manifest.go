package reports

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
	"golang.org/x/sys/unix"

	"weaseldb/internal/procstat"
)

// DescribeMachine records the machine this process runs on. GOMAXPROCS is this
// process's: the other binaries of the run start in the same environment.
func DescribeMachine() Machine {
	m := Machine{
		CPUModel:      procstat.CPUModel(),
		Cores:         runtime.NumCPU(),
		GoVersion:     runtime.Version(),
		GOMAXPROCS:    runtime.GOMAXPROCS(0),
		GOMAXPROCSEnv: os.Getenv("GOMAXPROCS"),
		OS:            runtime.GOOS,
		Arch:          runtime.GOARCH,
	}
	var u unix.Utsname
	if err := unix.Uname(&u); err == nil {
		m.Kernel = unix.ByteSliceToString(u.Sysname[:]) + " " + unix.ByteSliceToString(u.Release[:])
	}
	m.Hostname, _ = os.Hostname()
	return m
}

// ReadConfigRecord decodes a server TOML config as is, for the manifest.
func ReadConfigRecord(path string) (ConfigRecord, error) {
	values := map[string]any{}
	if _, err := toml.DecodeFile(path, &values); err != nil {
		return ConfigRecord{}, fmt.Errorf("read config %s: %w", path, err)
	}
	return ConfigRecord{Path: path, Values: values}, nil
}

// ReadSteps parses the script's step log: one line per command,
// "name<TAB>exit code<TAB>wall seconds<TAB>command".
func ReadSteps(path string) ([]Step, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read steps: %w", err)
	}
	return parseSteps(path, data)
}

func parseSteps(path string, data []byte) ([]Step, error) {
	var steps []Step
	for i, line := range strings.Split(strings.TrimRight(string(data), "\n"), "\n") {
		if line == "" {
			continue
		}
		parts := strings.SplitN(line, "\t", 4)
		if len(parts) != 4 {
			return nil, fmt.Errorf("read steps %s line %d: want 4 tab-separated fields, got %d", path, i+1, len(parts))
		}
		code, err := strconv.Atoi(parts[1])
		if err != nil {
			return nil, fmt.Errorf("read steps %s line %d: exit code: %w", path, i+1, err)
		}
		wall, err := strconv.ParseFloat(parts[2], 64)
		if err != nil {
			return nil, fmt.Errorf("read steps %s line %d: wall time: %w", path, i+1, err)
		}
		steps = append(steps, Step{Name: parts[0], ExitCode: code, WallS: wall, Command: parts[3]})
	}
	return steps, nil
}

// ConfigAdjustment changes a config's TCP interfaces for a local run. Empty
// or zero fields leave the config's value.
type ConfigAdjustment struct {
	TCPAddress string
	TCPPort    int
}

// AdjustConfig writes a copy of the TOML config at in to out with the TCP
// interfaces changed as adj says (the unix socket path is kept: relative, it
// lands in the server's working directory). The copy is re-encoded, so
// comments are dropped.
func AdjustConfig(in, out string, adj ConfigAdjustment) error {
	values := map[string]any{}
	if _, err := toml.DecodeFile(in, &values); err != nil {
		return fmt.Errorf("adjust config %s: %w", in, err)
	}
	if server, ok := values["server"].(map[string]any); ok {
		for _, iface := range tables(server["interfaces"]) {
			if iface["type"] != "tcp" {
				continue
			}
			if adj.TCPAddress != "" {
				iface["address"] = adj.TCPAddress
			}
			if adj.TCPPort != 0 {
				iface["port"] = int64(adj.TCPPort)
			}
		}
	}
	f, err := os.Create(out)
	if err != nil {
		return fmt.Errorf("adjust config: %w", err)
	}
	if err := toml.NewEncoder(f).Encode(values); err != nil {
		f.Close()
		return fmt.Errorf("adjust config: encode %s: %w", out, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("adjust config: %w", err)
	}
	return nil
}

// tables returns the tables of a decoded TOML array (inline tables decode as
// []any, arrays of tables as []map[string]any).
func tables(v any) []map[string]any {
	switch a := v.(type) {
	case []map[string]any:
		return a
	case []any:
		var out []map[string]any
		for _, e := range a {
			if m, ok := e.(map[string]any); ok {
				out = append(out, m)
			}
		}
		return out
	}
	return nil
}
