package reports

import (
	"strings"
	"testing"
)

func TestParsePrintedPlan(t *testing.T) {
	cases := []struct {
		name, text string
		want       []printedThread
		err        string
	}{
		{"bench_pipeline's lines, then what it gave up and a warning",
			"producer cpu=10 core=10 node=1 idle=11\nstage 0 cpu=12 core=12 node=1 idle=none\ngave up: one node for the server: ...\nwarning: IRQ 38 (eth0, virtio2-input.0) may land on CPU 12, dedicated to stage 0\n",
			[]printedThread{{"producer", 10, 10, 1}, {"stage 0", 12, 12, 1}}, ""},
		{"a flat machine", "producer cpu=1 core=1 node=0 idle=none\ntopology: flat (no CPU topology in sysfs)\n",
			[]printedThread{{"producer", 1, 1, 0}}, ""},
		{"no node", "producer cpu=1 core=1 idle=none\n", nil, "no cpu=, core= and node= all three"},
		{"not a number", "producer cpu=x core=1 node=0\n", nil, "cpu is not a number"},
		{"nothing printed", "bench_pipeline: --cpus auto: needs 4 CPUs\n", nil, "no thread lines"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := parsePrintedPlan(c.text)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want %q", err, c.err)
				}
				return
			}
			if err != nil || len(got) != len(c.want) {
				t.Fatalf("%+v, %v; want %+v", got, err, c.want)
			}
			for i := range got {
				if got[i] != c.want[i] {
					t.Errorf("thread %d: %+v, want %+v", i, got[i], c.want[i])
				}
			}
		})
	}
}
