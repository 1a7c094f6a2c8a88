package procstat

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// A recorded machine: eth0 a virtio NIC (its MSI interrupts on the PCI
// function above it), eth1 a NIC whose queues are named after it, lo and a
// bridge without devices.
func TestNetworkIRQs(t *testing.T) {
	root := t.TempDir()
	proc, sys := filepath.Join(root, "proc"), filepath.Join(root, "sys")
	write := func(path, value string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(value), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(proc, "interrupts"), `           CPU0       CPU1
 24:          2          0  IO-APIC   5-edge      ACPI:Ged
 38:          0      15519 PCI-MSIX-0000:00:03.0   1-edge      virtio2-input.0
 39:      15231          0 PCI-MSIX-0000:00:03.0   2-edge      virtio2-output.0
 50:          1          0 PCI-MSIX-0000:00:07.0   0-edge      eth1-TxRx-0
 51:          1          0 PCI-MSIX-0000:00:07.0   1-edge      eth1-TxRx-1
LOC:    6513627    6019883   Local timer interrupts
`)
	for irq, cpus := range map[string]string{"24": "0", "38": "1", "39": "0", "50": "2-3", "51": "0-3"} {
		write(filepath.Join(proc, "irq", irq, "smp_affinity_list"), "0-3\n")
		write(filepath.Join(proc, "irq", irq, "effective_affinity_list"), cpus+"\n")
	}
	pci := filepath.Join(sys, "devices/pci0000:00/0000:00:03.0")
	write(filepath.Join(pci, "msi_irqs", "38"), "msix")
	write(filepath.Join(pci, "msi_irqs", "39"), "msix")
	write(filepath.Join(pci, "virtio2", "vendor"), "0x1af4")
	nic := filepath.Join(sys, "devices/pci0000:00/0000:00:07.0")
	write(filepath.Join(nic, "vendor"), "0x8086")
	for iface, dev := range map[string]string{"eth0": filepath.Join(pci, "virtio2"), "eth1": nic, "lo": "", "br0": ""} {
		dir := filepath.Join(sys, "class/net", iface)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if dev != "" {
			if err := os.Symlink(dev, filepath.Join(dir, "device")); err != nil {
				t.Fatal(err)
			}
		}
	}
	got := NetworkIRQs(proc, sys)
	want := []IRQ{
		{38, "eth0", "virtio2-input.0", []int{1}},
		{39, "eth0", "virtio2-output.0", []int{0}},
		{50, "eth1", "eth1-TxRx-0", []int{2, 3}},
		{51, "eth1", "eth1-TxRx-1", []int{0, 1, 2, 3}},
	}
	if !slices.EqualFunc(got, want, func(a, b IRQ) bool {
		return a.Number == b.Number && a.Interface == b.Interface && a.Name == b.Name && slices.Equal(a.CPUs, b.CPUs)
	}) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
	if got := NetworkIRQs(filepath.Join(root, "none"), filepath.Join(root, "none")); len(got) != 0 {
		t.Errorf("a machine without the files: %+v, want none", got)
	}
}
