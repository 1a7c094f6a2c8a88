package placement

import (
	"reflect"
	"strings"
	"testing"

	"weaseldb/internal/affinity"
)

func cpus(t *testing.T, s string) []int {
	t.Helper()
	c, err := affinity.ParseCPUList(s)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func list(c []int) string {
	if len(c) == 0 {
		return ""
	}
	return affinity.FormatCPUList(c)
}

// stage builds StageThreads of the commit pipeline: sequence, resolve,
// persist, and the release threads.
func stages(release int) []int { return []int{1, 1, 1, release} }

func TestPlace(t *testing.T) {
	for _, tc := range []struct {
		name, allowed string
		need          Need
		dedicated     bool
		io, load      string // dedicated: each thread's CPU in list form
		stages        []string
		server        string // the server process's set
		kept          string
	}{
		{name: "2 CPUs, gate-like", allowed: "0-1", need: Need{IOThreads: 1, StageThreads: stages(1), LoadThreads: 1},
			server: "0", load: "1", kept: ""},
		{name: "4 CPUs, gate-like: one kept, then halves", allowed: "0-3", need: Need{IOThreads: 1, StageThreads: stages(1), LoadThreads: 1},
			server: "1-2", load: "3", kept: "0"},
		{name: "1 CPU: nothing pinned", allowed: "0", need: Need{IOThreads: 1, LoadThreads: 1}, kept: "0"},
		{name: "16 CPUs, fitted setup", allowed: "0-15", need: Need{IOThreads: 5, StageThreads: stages(1), LoadThreads: 6},
			dedicated: true, io: "1-5", stages: []string{"6", "7", "8", "9"}, load: "10-15", server: "1-9", kept: "0"},
		{name: "16 CPUs, 8 loops and 2 load threads: surplus kept", allowed: "0-15", need: Need{IOThreads: 8, StageThreads: stages(1), LoadThreads: 2},
			dedicated: true, io: "2-9", stages: []string{"10", "11", "12", "13"}, load: "14-15", server: "2-13", kept: "0-1"},
		{name: "holes 0-3,8-11, fits", allowed: "0-3,8-11", need: Need{IOThreads: 2, StageThreads: stages(1), LoadThreads: 1},
			dedicated: true, io: "1-2", stages: []string{"3", "8", "9", "10"}, load: "11", server: "1-3,8-10", kept: "0"},
		{name: "holes 0-3,8-11, too small: shared halves", allowed: "0-3,8-11", need: Need{IOThreads: 2, StageThreads: stages(1), LoadThreads: 2},
			server: "1-3,8", load: "9-11", kept: "0"},
		{name: "a benchmark's producer and stages", allowed: "0-15", need: Need{Producer: true, StageThreads: []int{1, 1}},
			dedicated: true, io: "", stages: []string{"14", "15"}, server: "14-15", kept: "0-12"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := Place(cpus(t, tc.allowed), tc.need)
			if p.Dedicated != tc.dedicated {
				t.Fatalf("dedicated %v, want %v (%s)", p.Dedicated, tc.dedicated, p.Why)
			}
			if got := list(p.ServerCPUs); got != tc.server {
				t.Errorf("server %q, want %q (%s)", got, tc.server, p.Why)
			}
			if got := list(p.LoadCPUs); got != tc.load {
				t.Errorf("load %q, want %q (%s)", got, tc.load, p.Why)
			}
			if got := list(p.Kept); got != tc.kept {
				t.Errorf("kept %q, want %q", got, tc.kept)
			}
			if tc.dedicated {
				if got := list(p.IOCPUs); got != tc.io {
					t.Errorf("io %q, want %q", got, tc.io)
				}
				var got []string
				for _, s := range p.StageCPUs {
					got = append(got, list(s))
				}
				if !reflect.DeepEqual(got, tc.stages) {
					t.Errorf("stages %q, want %q", got, tc.stages)
				}
			}
			assertDisjointWithin(t, p, cpus(t, tc.allowed))
		})
	}
}

// No CPU is given twice, and every CPU given is allowed.
func assertDisjointWithin(t *testing.T, p Plan, allowed []int) {
	t.Helper()
	seen := map[int]string{}
	add := func(what string, c []int) {
		for _, x := range c {
			if prev, ok := seen[x]; ok {
				t.Errorf("CPU %d given to %s and %s", x, prev, what)
			}
			seen[x] = what
		}
	}
	add("server", p.ServerCPUs)
	add("load", p.LoadCPUs)
	add("kept", p.Kept)
	if p.ProducerCPU >= 0 {
		add("producer", []int{p.ProducerCPU})
	}
	for x := range seen {
		if err := affinity.Validate([]int{x}, allowed); err != nil {
			t.Errorf("CPU %d: %v", x, err)
		}
	}
}

func TestPlaceDedicatedSaysWhatItNeeds(t *testing.T) {
	_, err := PlaceDedicated(cpus(t, "0-5"), Need{IOThreads: 1, StageThreads: stages(1), LoadThreads: 1})
	if err == nil || !strings.Contains(err.Error(), "needs 7 CPUs (6 dedicated + 1 for the rest), this process may use 6 (0-5)") {
		t.Fatalf("err %v", err)
	}
	if _, err := PlaceDedicated(cpus(t, "0-5"), Need{}); err == nil {
		t.Fatal("an empty need was placed")
	}
}
