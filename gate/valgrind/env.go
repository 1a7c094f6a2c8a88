package valgrind

import (
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"time"
)

// The environment a Go server gets under valgrind, fitted to the CPU.
//
// Valgrind runs a program on a synthetic CPU: its CPUID answers with a
// model of its own, while its instruction decoder handles only what the
// host CPU has (valgrind -v prints that set as "hwcaps"). On some hosts the
// two disagree: valgrind 3.19's synthetic CPUID offers RDTSCP on a host
// whose (virtual) CPU hides it, Go's runtime then reads the clock with
// RDTSCP in runtime.cputicks, and the decoder stops the program with
// SIGILL ("Unrecognised instruction"). It happens only when a lock spins,
// so a run can pass or die at random.
//
// Go lets a program be told not to use a CPU feature (GODEBUG=cpu.NAME=off,
// the options internal/cpu lists). So before a cost run the gate asks
// valgrind for its hwcaps and turns off every such option whose
// instructions valgrind's decoder lacks here. Go's x86 options are adx,
// aes, erms, fsrm, pclmulqdq, rdtscp, sha, vpclmulqdq and, below the
// GOAMD64 level that requires them, popcnt, sse3, sse41, sse42, ssse3,
// avx, avx2, bmi1, bmi2, fma and avx512*. Of these, the decoder gates
// on a hwcap only the ones in hwcapOptions below; the others it either
// decodes everywhere (aes, pclmulqdq, popcnt, sse4, erms: plain encodings)
// or its synthetic CPUID never offers them (adx, sha, fsrm, vpclmulqdq,
// avx512*: valgrind 3.19 offers none of them), so Go never uses them.

// hwcapOptions maps a Go internal/cpu option to the valgrind hwcap whose
// absence means valgrind cannot execute its instructions.
var hwcapOptions = []struct{ option, hwcap string }{
	{"rdtscp", "rdtscp"},
	{"sse3", "sse3"},
	{"ssse3", "ssse3"},
	{"avx", "avx"},
	{"avx2", "avx2"},
	{"fma", "avx2"},
	{"bmi1", "bmi"},
	{"bmi2", "bmi"},
}

// baseGodebug: no asynchronous preemption (callgrind aborts in its
// signal handling in most runs without it) and no sampling of allocations
// for the heap profile (each sample unwinds a stack, and which allocations
// are sampled is random: 0.1-0.3% of a commit's count).
const baseGodebug = "asyncpreemptoff=1,memprofilerate=0"

// Env is what the gate found of valgrind on this machine.
type Env struct {
	Version string `json:"version,omitempty"` // "valgrind-3.19.0"
	Hwcaps  string `json:"hwcaps,omitempty"`  // valgrind's own line, e.g. "amd64-cx16-lzcnt-sse3-..."
	// CPUOff are the Go CPU options turned off (GODEBUG cpu.NAME=off)
	// because valgrind cannot execute them here.
	CPUOff []string `json:"cpu_off,omitempty"`
	// Extra is the user's own GODEBUG settings (--cost-godebug).
	Extra string `json:"extra_godebug,omitempty"`
	Note  string `json:"note,omitempty"` // why the list is a guess, when it is
}

// Godebug is the server's GODEBUG under valgrind.
func (v Env) Godebug() string {
	parts := []string{baseGodebug}
	for _, o := range v.CPUOff {
		parts = append(parts, "cpu."+o+"=off")
	}
	if v.Extra != "" {
		parts = append(parts, v.Extra)
	}
	return strings.Join(parts, ",")
}

// Environ is the server's environment under valgrind: the GODEBUG above,
// and no garbage collection (a cycle lands in one run in a few and costs a
// few percent; allocation is counted on its own).
func (v Env) Environ() []string {
	return []string{"GODEBUG=" + v.Godebug(), "GOGC=off"}
}

var hwcapsLine = regexp.MustCompile(`Arch and hwcaps: [^,]+, [^,]+, (\S+)`)

// Probe asks valgrind for its version and hwcaps (valgrind -v on the
// `true` program, no tool) and derives the options to turn off; extra is
// the user's own GODEBUG settings. When valgrind does not say, RDTSCP, the
// one case seen, is turned off: Go then reads the clock with RDTSC, which
// every valgrind decodes. The cost tier probes before its first run, and
// so do other tools that count a Go program under callgrind the same way
// (cmd/peers): the returned Env's Godebug is what the program's GODEBUG
// must be.
func Probe(ctx context.Context, valgrind, extra string) Env {
	env := Env{Extra: extra}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if out, err := exec.CommandContext(ctx, valgrind, "--version").Output(); err == nil {
		env.Version = strings.TrimSpace(string(out))
	}
	truePath, err := exec.LookPath("true")
	if err != nil {
		truePath = "/bin/true"
	}
	out, err := exec.CommandContext(ctx, valgrind, "-v", "--tool=none", truePath).CombinedOutput()
	m := hwcapsLine.FindSubmatch(out)
	if m == nil {
		env.CPUOff = []string{"rdtscp"}
		env.Note = fmt.Sprintf("valgrind -v did not print its hwcaps (%v); turned off rdtscp, the feature known to be offered but not executable", errOrNone(err))
		return env
	}
	env.Hwcaps = string(m[1])
	env.CPUOff = unexecutableOptions(env.Hwcaps)
	return env
}

func errOrNone(err error) string {
	if err == nil {
		return "no error"
	}
	return err.Error()
}

// unexecutableOptions are the Go CPU options whose hwcap is missing from
// valgrind's hwcaps string (dash-separated after the architecture).
func unexecutableOptions(hwcaps string) []string {
	have := strings.Split(hwcaps, "-")
	var off []string
	for _, h := range hwcapOptions {
		if !slices.Contains(have, h.hwcap) && !slices.Contains(off, h.option) {
			off = append(off, h.option)
		}
	}
	return off
}
