package result

import (
	"fmt"
	"slices"
)

// Settings are what a measurement depends on besides the server binary:
// a baseline only compares with a run made with the same settings.
type Settings struct {
	Network      string   `json:"network"`
	DurationS    float64  `json:"duration_s"`
	WarmupS      float64  `json:"warmup_s"`
	Concurrency  int      `json:"concurrency"`
	Threads      int      `json:"network_threads"`
	Path         string   `json:"path"`
	LoadArgs     []string `json:"load_args,omitempty"`
	ConfigSHA256 string   `json:"config_sha256"`
	// The CPU lists of the plan ("" when unpinned): a pinned and an
	// unpinned measurement are not comparable.
	ServerCPUs string `json:"server_cpus,omitempty"`
	ClientCPUs string `json:"client_cpus,omitempty"`
}

// Differences lists the settings in which s and now differ.
func (s Settings) Differences(now Settings) []string {
	var d []string
	add := func(name string, was, is any) {
		d = append(d, fmt.Sprintf("%s %v, now %v", name, was, is))
	}
	if s.Network != now.Network {
		add("network", s.Network, now.Network)
	}
	if s.DurationS != now.DurationS {
		add("duration_s", s.DurationS, now.DurationS)
	}
	if s.WarmupS != now.WarmupS {
		add("warmup_s", s.WarmupS, now.WarmupS)
	}
	if s.Concurrency != now.Concurrency {
		add("concurrency", s.Concurrency, now.Concurrency)
	}
	if s.Threads != now.Threads {
		add("network_threads", s.Threads, now.Threads)
	}
	if s.ServerCPUs != now.ServerCPUs || s.ClientCPUs != now.ClientCPUs {
		add("pinning", PinText(s.ServerCPUs, s.ClientCPUs), PinText(now.ServerCPUs, now.ClientCPUs))
	}
	if s.Path != now.Path {
		add("path", s.Path, now.Path)
	}
	if !slices.Equal(s.LoadArgs, now.LoadArgs) {
		add("load_args", s.LoadArgs, now.LoadArgs)
	}
	if s.ConfigSHA256 != now.ConfigSHA256 {
		add("config sha256", ShortHash(s.ConfigSHA256), ShortHash(now.ConfigSHA256))
	}
	return d
}

// PinText says where the servers and the load tester ran, as a result
// and a baseline's differences name it.
func PinText(server, client string) string {
	if server == "" {
		return "unpinned"
	}
	return "server " + server + " / load tester " + client
}

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

// ShortHash is a hash as the gate prints it, its first 12 digits: a
// commit in a label or a history's steps, a config's sha256.
func ShortHash(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}
