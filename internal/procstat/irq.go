package procstat

import (
	"bufio"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// ProcRoot is where procfs is mounted; tests read recorded trees instead.
const ProcRoot = "/proc"

// IRQ is one interrupt line of a network device and the CPUs it may land
// on. Read by hand, as the topology is: procfs parses neither
// /proc/irq/N/*_affinity_list nor which device an interrupt serves.
type IRQ struct {
	Number    int
	Interface string // the network interface it serves ("eth0")
	Name      string // its action in /proc/interrupts ("virtio2-input.0", "eth0-TxRx-3")
	CPUs      []int  // effective_affinity_list where the kernel has it, else smp_affinity_list
}

// NetworkIRQs lists the interrupts of the machine's network devices: each
// interface under sysRoot/class/net backed by a device (lo, bridges and
// other virtual interfaces have none), its MSI interrupts (the device's or
// its parent's, as virtio's PCI function holds them), its legacy line, and
// every line of /proc/interrupts that names the interface. What cannot be
// read is left out: this feeds a warning, never a decision.
func NetworkIRQs(procRoot, sysRoot string) []IRQ {
	names := interruptNames(filepath.Join(procRoot, "interrupts"))
	ifaces, _ := filepath.Glob(filepath.Join(sysRoot, "class/net/*"))
	var out []IRQ
	seen := map[int]bool{}
	for _, iface := range ifaces {
		name := filepath.Base(iface)
		dev, err := filepath.EvalSymlinks(filepath.Join(iface, "device"))
		if err != nil {
			continue
		}
		nums := deviceIRQs(dev)
		for n, action := range names {
			if strings.Contains(action, name) {
				nums = append(nums, n)
			}
		}
		for _, n := range slices.Compact(slices.Sorted(slices.Values(nums))) {
			if seen[n] {
				continue
			}
			seen[n] = true
			out = append(out, IRQ{Number: n, Interface: name, Name: names[n], CPUs: irqCPUs(procRoot, n)})
		}
	}
	slices.SortFunc(out, func(a, b IRQ) int { return a.Number - b.Number })
	return out
}

// deviceIRQs reads msi_irqs (and a legacy irq) of a device and its parent.
func deviceIRQs(dev string) []int {
	var nums []int
	for _, d := range []string{dev, filepath.Dir(dev)} {
		entries, _ := os.ReadDir(filepath.Join(d, "msi_irqs"))
		for _, e := range entries {
			if n, err := strconv.Atoi(e.Name()); err == nil {
				nums = append(nums, n)
			}
		}
		if n := readID(filepath.Join(d, "irq")); n > 0 {
			nums = append(nums, n)
		}
	}
	return nums
}

// interruptNames maps each numbered line of /proc/interrupts to its
// action names (the fields after the per-CPU counts, chip and type).
func interruptNames(path string) map[int]string {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	names := map[int]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		num, rest, ok := strings.Cut(sc.Text(), ":")
		n, err := strconv.Atoi(strings.TrimSpace(num))
		if !ok || err != nil {
			continue
		}
		fields := strings.Fields(rest)
		if len(fields) > 0 {
			names[n] = fields[len(fields)-1]
		}
	}
	return names
}

func irqCPUs(procRoot string, n int) []int {
	dir := filepath.Join(procRoot, "irq", strconv.Itoa(n))
	for _, f := range []string{"effective_affinity_list", "smp_affinity_list"} {
		if cpus, err := readCPUList(filepath.Join(dir, f)); err == nil && len(cpus) > 0 {
			return cpus
		}
	}
	return nil
}
