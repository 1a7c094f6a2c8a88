package reports

import "testing"

func TestPlacementNote(t *testing.T) {
	lines := []string{"io 0 cpu=2 core=2 node=0 idle=3", "stage 0 cpu=4 core=4 node=1 idle=none"}
	got := placementNote(lines, []string{"one node for the server: no room"}, []string{"IRQ 38 ..."})
	want := "; physical cores 2,4, node 0-1, 1 with their hyper-threads left idle; gave up one node for the server: no room; 1 network interrupts may land on these CPUs (irq_warnings)"
	if got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
	if placementNote(nil, nil, nil) != "" {
		t.Error("a run without placement lines has a note")
	}
}
