package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
	"golang.org/x/sys/unix"

	"weaseldb/artifacts"
	"weaseldb/internal/jsonfile"
	"weaseldb/internal/procstat"
)

// DescribeMachine records the machine this process runs on. GOMAXPROCS is this
// process's: the other binaries of the run start in the same environment.
func DescribeMachine() artifacts.Machine {
	m := artifacts.Machine{
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
func ReadConfigRecord(path string) (artifacts.ConfigRecord, error) {
	values := map[string]any{}
	if _, err := toml.DecodeFile(path, &values); err != nil {
		return artifacts.ConfigRecord{}, fmt.Errorf("read config %s: %w", path, err)
	}
	return artifacts.ConfigRecord{Path: path, Values: values}, nil
}

// ReadSteps parses the script's step log: one line per command,
// "name<TAB>exit code<TAB>wall seconds<TAB>command".
func ReadSteps(path string) ([]artifacts.Step, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read steps: %w", err)
	}
	return parseSteps(path, data)
}

func parseSteps(path string, data []byte) ([]artifacts.Step, error) {
	var steps []artifacts.Step
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
		steps = append(steps, artifacts.Step{Name: parts[0], ExitCode: code, WallS: wall, Command: parts[3]})
	}
	return steps, nil
}

// ManifestOptions are what the script knows of its run.
type ManifestOptions struct {
	Config, ConfigSource string // the config the seed's servers read, and its source
	Steps                string // the step log
	DurationS            float64
	Quick                bool
	Nofile, StartedAt    string
	// Set by scripts/manycore.sh inside its guest: the accelerator QEMU
	// ran the guest with ("tcg" or "kvm"; "" when the run was not in a
	// virtual machine), the host's CPU count and model.
	VirtualAccel string
	HostCPUs     int
	HostCPUModel string
	// The source revision and build command (scripts pass them; Revision
	// "" leaves the manifest without a source record), and the repository
	// root the paths in Config and Steps are under.
	Revision, Describe, BuildCommand string
	Dirty                            bool
	Root                             string
}

// WriteManifest builds the run's manifest and writes it to out (default
// runDir/manifest.json); it returns the path written.
func WriteManifest(runDir, out string, o ManifestOptions) (string, error) {
	switch o.VirtualAccel {
	case "", "tcg", "kvm":
	default:
		return "", fmt.Errorf("manifest: --virtual takes tcg or kvm, got %q", o.VirtualAccel)
	}
	m, err := BuildManifest(o)
	if err != nil {
		return "", err
	}
	if abs, err := filepath.Abs(runDir); err == nil {
		m.RunDir = abs
	}
	if out == "" {
		out = filepath.Join(runDir, artifacts.ManifestFile)
	}
	if err := jsonfile.WriteFile(out, m); err != nil {
		return "", err
	}
	return out, nil
}

// BuildManifest describes the run: this machine, the config, the steps.
func BuildManifest(o ManifestOptions) (artifacts.Manifest, error) {
	cfg, err := ReadConfigRecord(o.Config)
	if err != nil {
		return artifacts.Manifest{}, err
	}
	cfg.Source = o.ConfigSource
	steps, err := ReadSteps(o.Steps)
	if err != nil {
		return artifacts.Manifest{}, err
	}
	m := artifacts.Manifest{Version: 1, StartedAt: o.StartedAt, FinishedAt: time.Now().UTC().Format(time.RFC3339),
		DurationS: o.DurationS, Quick: o.Quick, Machine: DescribeMachine(), Config: cfg, Steps: steps,
		NofileLimit: o.Nofile, Root: o.Root}
	if o.Revision != "" {
		m.Source = &artifacts.SourceRecord{Revision: o.Revision, Describe: o.Describe, Dirty: o.Dirty, BuildCommand: o.BuildCommand}
	}
	if o.VirtualAccel != "" {
		steal, err := procstat.MachineSteal()
		m.Virtual = DescribeVirtual(o.VirtualAccel, m.Machine.Cores, o.HostCPUs, o.HostCPUModel, steal, err)
	}
	return m, nil
}

// DescribeVirtual records a run in a QEMU guest: emulated under TCG,
// hardware-virtualized under KVM; either way a functional check.
func DescribeVirtual(accel string, guestCPUs, hostCPUs int, hostModel string, steal time.Duration, stealErr error) *artifacts.VirtualMachine {
	v := &artifacts.VirtualMachine{Hypervisor: "qemu", Accel: accel, Emulated: accel == "tcg", GuestCPUs: guestCPUs,
		HostCPUs: hostCPUs, HostCPUModel: hostModel, StealS: steal.Seconds()}
	switch {
	case stealErr != nil:
		v.StealNote = "steal time not read: " + stealErr.Error()
	case v.Emulated:
		v.StealNote = "TCG gives the guest no steal clock, so this reads 0 whatever the host did; the sharing is guest CPUs over host CPUs"
	default:
		v.StealNote = "KVM's steal clock: time the host ran something else while a virtual CPU was ready"
	}
	kind := "virtual (KVM)"
	if v.Emulated {
		kind = "emulated (QEMU TCG: every instruction translated in software, typically 10-50x slower than the host)"
	}
	v.Note = fmt.Sprintf("%d guest CPUs, %s, on a host with %d CPUs: a functional check of what ran where, never a measurement of speed",
		guestCPUs, kind, hostCPUs)
	return v
}
