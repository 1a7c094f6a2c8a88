package placement

import (
	"reflect"
	"strings"
	"testing"
)

// PlaceHot on injected CPU sets: the latency family's two hot threads, the
// wait_strategy family's three, and the server's six, from 2 CPUs to 16.
func TestPlaceHot(t *testing.T) {
	latency := Need{Producer: true, StageThreads: []int{1}}
	waitFamily := Need{Producer: true, StageThreads: []int{1, 1}}
	server := Need{IOThreads: 1, StageThreads: stages(1), LoadThreads: 1}
	for _, tc := range []struct {
		name, allowed  string
		need           Need
		dedicated      bool
		partial        bool
		producer       int
		stages         []string
		io, load, kept string
		shared         []string
		whyHas         []string
	}{
		{name: "2 CPUs, latency: producer and stage each own one, none kept", allowed: "0-1", need: latency,
			dedicated: true, producer: 0, stages: []string{"1"},
			whyHas: []string{"none kept", "producer on 0, stage 0 on 1, each alone", "float over 0-1, sharing the hot threads' CPUs"}},
		{name: "3 CPUs, latency: the full plan", allowed: "0-2", need: latency,
			dedicated: true, producer: 1, stages: []string{"2"}, kept: "0",
			whyHas: []string{"2 threads on a CPU each (1-2), 0 kept", "float over 0-2 (kept: 0)"}},
		{name: "16 CPUs, latency: the full plan", allowed: "0-15", need: latency,
			dedicated: true, producer: 14, stages: []string{"15"}, kept: "0-13"},
		{name: "2 CPUs, wait family: producer alone, the stages share 0", allowed: "0-1", need: waitFamily,
			partial: true, producer: 1, stages: []string{"0", "0"}, shared: []string{"stage 0", "stage 1"},
			whyHas: []string{"partly dedicated cores (2 CPUs for 3 threads): producer on 1, each alone; stage 0, stage 1 share 0"}},
		{name: "3 CPUs, wait family: all three own one, none kept", allowed: "0-2", need: waitFamily,
			dedicated: true, producer: 0, stages: []string{"1", "2"}},
		{name: "4 CPUs, wait family: the full plan", allowed: "0-3", need: waitFamily,
			dedicated: true, producer: 1, stages: []string{"2", "3"}, kept: "0"},
		{name: "3 CPUs, server: loop and sequence own one, the rest share 0", allowed: "0-2", need: server,
			partial: true, producer: -1, io: "1", stages: []string{"2", "0", "0", "0"}, load: "0",
			shared: []string{"stage 1", "stage 2", "stage 3", "load 0"}},
		{name: "4 CPUs, server: three threads own one", allowed: "0-3", need: server,
			partial: true, producer: -1, io: "1", stages: []string{"2", "3", "0", "0"}, load: "0",
			shared: []string{"stage 2", "stage 3", "load 0"}},
		{name: "16 CPUs, server: the full plan", allowed: "0-15", need: server,
			dedicated: true, producer: -1, io: "10", stages: []string{"11", "12", "13", "14"}, load: "15", kept: "0-9"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := PlaceHot(cpus(t, tc.allowed), tc.need)
			if err != nil {
				t.Fatal(err)
			}
			if p.Dedicated != tc.dedicated || p.Partial != tc.partial {
				t.Fatalf("dedicated %v partial %v, want %v %v (%s)", p.Dedicated, p.Partial, tc.dedicated, tc.partial, p.Why)
			}
			if p.ProducerCPU != tc.producer {
				t.Errorf("producer on %d, want %d (%s)", p.ProducerCPU, tc.producer, p.Why)
			}
			var got []string
			for _, s := range p.StageCPUs {
				got = append(got, list(s))
			}
			if !reflect.DeepEqual(got, tc.stages) {
				t.Errorf("stages %q, want %q (%s)", got, tc.stages, p.Why)
			}
			if list(p.IOCPUs) != tc.io || list(p.LoadCPUs) != tc.load || list(p.Kept) != tc.kept {
				t.Errorf("io %q load %q kept %q, want %q %q %q (%s)", list(p.IOCPUs), list(p.LoadCPUs), list(p.Kept), tc.io, tc.load, tc.kept, p.Why)
			}
			if !reflect.DeepEqual(p.Shared, tc.shared) {
				t.Errorf("shared %q, want %q", p.Shared, tc.shared)
			}
			for _, w := range tc.whyHas {
				if !strings.Contains(p.Why, w) {
					t.Errorf("why %q lacks %q", p.Why, w)
				}
			}
			// A thread that owns a CPU shares it with no other pinned thread.
			owner := map[int]int{}
			for _, c := range p.IOCPUs {
				owner[c]++
			}
			for _, s := range p.StageCPUs {
				for _, c := range s {
					owner[c]++
				}
			}
			if p.ProducerCPU >= 0 {
				owner[p.ProducerCPU]++
			}
			for _, c := range p.LoadCPUs {
				owner[c]++
			}
			for c, n := range owner {
				if n > 1 && (p.Dedicated || c != cpus(t, tc.allowed)[0]) {
					t.Errorf("CPU %d given to %d threads (%s)", c, n, p.Why)
				}
			}
		})
	}
}

func TestPlaceHotNeedsTwoCPUs(t *testing.T) {
	_, err := PlaceHot(cpus(t, "3"), Need{Producer: true, StageThreads: []int{1}})
	if err == nil || !strings.Contains(err.Error(), "needs at least 2 CPUs") || !strings.Contains(err.Error(), "may use 1 (3)") {
		t.Fatalf("err %v", err)
	}
	if _, err := PlaceHot(cpus(t, "0-3"), Need{}); err == nil {
		t.Fatal("an empty need was placed")
	}
}

// Place, the gate's and the report's rule, is untouched by PlaceHot: on 2
// CPUs it still shares.
func TestPlaceStillSharesOnSmallMachines(t *testing.T) {
	p := Place(cpus(t, "0-1"), Need{Producer: true, StageThreads: []int{1}})
	if p.Dedicated || p.Partial {
		t.Fatalf("Place on 2 CPUs: %+v", p)
	}
}
