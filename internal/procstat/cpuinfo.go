package procstat

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/prometheus/procfs"
)

// /proc/cpuinfo is the one /proc file this package parses itself: procfs
// picks its cpuinfo parser by GOARCH at build time (so an arm64 text cannot
// be tested on amd64), and its arm64 parser keeps no "CPU implementer" or
// "CPU part", which is all an arm64 kernel says of its CPU.

// CPUName is what the machine's CPU is called, and how that was found out.
type CPUName struct {
	// Model is the first CPU's model: "AMD EPYC 7B13" (x86's "model name"),
	// "ARM Neoverse-N1" (arm64's implementer and part, named as lscpu names
	// them; "ARM part 0xd99" for a part the table does not know), or the
	// board's "Model" where the kernel says nothing of the CPU. "" when
	// unknown.
	Model string
	// Source says where Model came from, e.g. `"model name" in
	// /proc/cpuinfo`; "" when Model is.
	Source string
	// Family is the first CPU's family: x86's "cpu family" ("25"), arm's
	// "CPU architecture" ("8"); "" when the kernel gives neither. A
	// comparison table names it beside the model, since one model name can
	// cover several microarchitectures in a virtual machine.
	Family string
}

// ReadCPUName reads the first CPU's name from /proc/cpuinfo. The error is
// for a file that cannot be read; a file that names no CPU gives a zero
// CPUName.
func ReadCPUName() (CPUName, error) { return procRoot(procfs.DefaultMountPoint).cpuName() }

// CPUModel returns the first CPU's model (ReadCPUName's), or "" when
// /proc/cpuinfo cannot be read or names no CPU.
func CPUModel() string {
	n, _ := ReadCPUName()
	return n.Model
}

func (root procRoot) cpuName() (CPUName, error) {
	path := filepath.Join(string(root), "cpuinfo")
	data, err := os.ReadFile(path)
	if err != nil {
		return CPUName{}, fmt.Errorf("procstat: %w", err)
	}
	return parseCPUName(data), nil
}

// parseCPUName names the first CPU of a /proc/cpuinfo text, whatever
// architecture wrote it: its "model name" (x86, and 32-bit arm kernels); else
// its "CPU implementer" and "CPU part" (arm64); else the board's "Model"
// (a device tree's, e.g. a Raspberry Pi's).
func parseCPUName(cpuinfo []byte) CPUName {
	n := parseModel(cpuinfo)
	if n.Model != "" {
		n.Family = firstValue(cpuinfo, "cpu family", "CPU architecture")
	}
	return n
}

// firstValue is the first non-empty value of any of keys in a cpuinfo text.
func firstValue(cpuinfo []byte, keys ...string) string {
	sc := bufio.NewScanner(bytes.NewReader(cpuinfo))
	for sc.Scan() {
		key, value, ok := strings.Cut(sc.Text(), ":")
		if ok && slices.Contains(keys, strings.TrimSpace(key)) && strings.TrimSpace(value) != "" {
			return strings.TrimSpace(value)
		}
	}
	return ""
}

func parseModel(cpuinfo []byte) CPUName {
	var implementer, part, board string
	sc := bufio.NewScanner(bytes.NewReader(cpuinfo))
	for sc.Scan() {
		key, value, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		key, value = strings.TrimSpace(key), strings.TrimSpace(value)
		if value == "" {
			continue
		}
		switch key {
		case "model name":
			return CPUName{Model: value, Source: `"model name" in /proc/cpuinfo`}
		case "CPU implementer":
			if implementer == "" {
				implementer = value
			}
		case "CPU part":
			if part == "" {
				part = value
			}
		case "Model":
			if board == "" {
				board = value
			}
		}
	}
	switch {
	case implementer != "" && part != "":
		return CPUName{Model: armName(implementer, part),
			Source: fmt.Sprintf(`"CPU implementer" %s and "CPU part" %s in /proc/cpuinfo, named as lscpu names them`, implementer, part)}
	case board != "":
		return CPUName{Model: board, Source: `"Model" in /proc/cpuinfo (the board's: the kernel names no CPU)`}
	}
	return CPUName{}
}

// armName is the vendor and model of an arm CPU from its MIDR fields, as
// util-linux's lscpu (lscpu-arm.c) names them: "ARM Neoverse-N1". An
// unknown part is given by number ("ARM part 0xd99"), an unknown
// implementer too ("implementer 0x99 part 0x001").
func armName(implementer, part string) string {
	imp, err1 := strconv.ParseUint(implementer, 0, 8)
	p, err2 := strconv.ParseUint(part, 0, 12)
	if err1 != nil || err2 != nil {
		return fmt.Sprintf("implementer %s part %s", implementer, part)
	}
	vendor, ok := armImplementers[imp]
	if !ok {
		return fmt.Sprintf("implementer 0x%02x part 0x%03x", imp, p)
	}
	if model, ok := armParts[[2]uint64{imp, p}]; ok {
		return vendor + " " + model
	}
	return fmt.Sprintf("%s part 0x%03x", vendor, p)
}

// armImplementers are MIDR_EL1 implementer codes (lscpu-arm.c).
var armImplementers = map[uint64]string{
	0x41: "ARM", 0x42: "Broadcom", 0x43: "Cavium", 0x46: "Fujitsu", 0x48: "HiSilicon",
	0x4e: "NVIDIA", 0x50: "APM", 0x51: "Qualcomm", 0x53: "Samsung", 0x56: "Marvell",
	0x61: "Apple", 0x69: "Intel", 0x6d: "Microsoft", 0x70: "Phytium", 0xc0: "Ampere",
}

// armParts are the parts of the server and board CPUs a run is likely to
// meet (lscpu-arm.c), by implementer and part code.
var armParts = map[[2]uint64]string{
	{0x41, 0xd03}: "Cortex-A53", {0x41, 0xd04}: "Cortex-A35", {0x41, 0xd05}: "Cortex-A55",
	{0x41, 0xd07}: "Cortex-A57", {0x41, 0xd08}: "Cortex-A72", {0x41, 0xd09}: "Cortex-A73",
	{0x41, 0xd0a}: "Cortex-A75", {0x41, 0xd0b}: "Cortex-A76", {0x41, 0xd0c}: "Neoverse-N1",
	{0x41, 0xd0d}: "Cortex-A77", {0x41, 0xd40}: "Neoverse-V1", {0x41, 0xd41}: "Cortex-A78",
	{0x41, 0xd44}: "Cortex-X1", {0x41, 0xd46}: "Cortex-A510", {0x41, 0xd47}: "Cortex-A710",
	{0x41, 0xd48}: "Cortex-X2", {0x41, 0xd49}: "Neoverse-N2", {0x41, 0xd4a}: "Neoverse-E1",
	{0x41, 0xd4f}: "Neoverse-V2",
	{0x43, 0x0af}: "ThunderX2 99xx",
	{0x46, 0x001}: "A64FX",
	{0x48, 0xd01}: "Kunpeng-920",
	{0xc0, 0xac3}: "Ampere-1", {0xc0, 0xac4}: "Ampere-1a",
}
