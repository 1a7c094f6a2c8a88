package reports

import (
	"fmt"
	"strings"
	"testing"

	"weaseldb/artifacts"
)

// th is a thread as read: its id, allowed CPUs and last CPU.
func th(tid int, allowed string, last int) artifacts.ThreadReading {
	return artifacts.ThreadReading{TID: tid, AllowedCPUs: allowed, LastCPU: last}
}

// dedicatedThreads is a server run on 0-9 with 2 loops on 2-3, the four
// stage threads on 4-7 and load_tester on 8-9, read back as planned, with
// unpinned runtime threads on the whole set.
func dedicatedThreads() *artifacts.Threads {
	return &artifacts.Threads{Version: artifacts.ThreadsVersion,
		Plan: artifacts.PinPlan{AllowedCPUs: "0-9", IOThreads: 2, IOCPUs: []int{2, 3},
			PipelineCPUs: [][]int{{4}, {5}, {6}, {7}}, LoadCPUs: []int{8, 9}},
		Processes: []artifacts.ProcessThreads{
			{Role: artifacts.RoleServer, Pid: 100, Threads: []artifacts.ThreadReading{
				th(100, "0-9", 1), th(101, "0-9", 0), th(102, "3", 3), th(103, "2", 2),
				th(104, "4", 4), th(105, "5", 5), th(106, "6", 6), th(107, "7", 7), th(108, "0-9", 9)}},
			{Role: artifacts.RoleClient, Pid: 200, Threads: []artifacts.ThreadReading{th(200, "8-9", 8), th(201, "8-9", 9)}},
		},
		Loops: []artifacts.LoopServed{{Loop: 0, Accepted: 10, Requests: 100}, {Loop: 1, Accepted: 12, Requests: 90}},
	}
}

func TestVerifyPinningAsPlanned(t *testing.T) {
	res := VerifyPinning(dedicatedThreads())
	if !res.OK() {
		t.Fatalf("problems: %v", res.Problems)
	}
	if len(res.Pinned) != 6 || res.Unpinned != 3 {
		t.Fatalf("pinned %d, unpinned %d; want 6 and 3", len(res.Pinned), res.Unpinned)
	}
	want := []string{"I/O loop 0", "I/O loop 1", "sequence", "resolve", "persist", "release"}
	for i, p := range res.Pinned {
		if p.Role != want[i] || p.CPU != i+2 {
			t.Errorf("pinned[%d] = %+v, want %s on CPU %d", i, p, want[i], i+2)
		}
	}
	if !strings.Contains(res.Summary(), "6 threads pinned as planned") || !strings.Contains(res.Client, "2 of 2 threads") {
		t.Errorf("summary %q, client %q", res.Summary(), res.Client)
	}
}

// Each way the threads can differ from the plan is named.
func TestVerifyPinningProblems(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(pl *artifacts.Threads)
		want   string
	}{
		{"a pinned thread ran elsewhere", func(pl *artifacts.Threads) { pl.Processes[0].Threads[4].LastCPU = 9 },
			"thread 104 (sequence) is pinned to CPU 4 but last ran on CPU 9"},
		{"a planned thread is missing", func(pl *artifacts.Threads) { pl.Processes[0].Threads[7].AllowedCPUs = "0-9" },
			"no weaseldb thread pinned to CPU 7 (planned for the release)"},
		{"two threads on one CPU", func(pl *artifacts.Threads) { pl.Processes[0].Threads[0].AllowedCPUs = "4" },
			"2 weaseldb threads pinned to CPU 4"},
		{"a mask that leaked", func(pl *artifacts.Threads) { pl.Processes[0].Threads[8].AllowedCPUs = "2-3" },
			"thread 108 may run on CPUs 2-3: neither a planned pinned thread nor the whole set"},
		{"a thread pinned to a CPU outside the plan", func(pl *artifacts.Threads) { pl.Processes[0].Threads[1].AllowedCPUs = "0" },
			"thread 101 may run on CPUs 0"},
		{"load_tester off its CPUs", func(pl *artifacts.Threads) { pl.Processes[1].Threads[1].AllowedCPUs = "0-9" },
			"load_tester thread 201 may run on CPUs 0-9, want 8-9"},
		{"load_tester ran elsewhere", func(pl *artifacts.Threads) { pl.Processes[1].Threads[0].LastCPU = 3 },
			"load_tester thread 200 last ran on CPU 3, outside 8-9"},
		{"server threads not read", func(pl *artifacts.Threads) {
			pl.Processes[0] = artifacts.ProcessThreads{Role: artifacts.RoleServer, Error: "gone"}
		},
			"weaseldb threads not read: gone"},
		{"nothing read", func(pl *artifacts.Threads) { pl.Processes = nil }, "no server or bench_pipeline threads"},
		{"load_tester not read", func(pl *artifacts.Threads) {
			pl.Processes[1] = artifacts.ProcessThreads{Role: artifacts.RoleClient, Error: "exited"}
		},
			"load_tester threads not read: exited"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pl := dedicatedThreads()
			tc.mutate(pl)
			res := VerifyPinning(pl)
			if res.OK() || !strings.Contains(strings.Join(res.Problems, "\n"), tc.want) {
				t.Fatalf("problems %q, want one containing %q", res.Problems, tc.want)
			}
		})
	}
}

// Shared cores: nothing may be pinned, load_tester included.
func TestVerifyPinningShared(t *testing.T) {
	pl := &artifacts.Threads{Plan: artifacts.PinPlan{AllowedCPUs: "0-3", IOThreads: 1},
		Processes: []artifacts.ProcessThreads{{Role: artifacts.RoleServer, Threads: []artifacts.ThreadReading{th(1, "0-3", 0), th(2, "0-3", 3)}},
			{Role: artifacts.RoleClient, Threads: []artifacts.ThreadReading{th(3, "0-3", 1)}}}}
	if res := VerifyPinning(pl); !res.OK() || !strings.HasPrefix(res.Summary(), "nothing pinned; 2 threads on the whole set") {
		t.Fatalf("%v: %s", res.Problems, res.Summary())
	}
	pl.Processes[0].Threads[1].AllowedCPUs = "3"
	if res := VerifyPinning(pl); res.OK() {
		t.Fatal("a pinned thread on shared cores passed")
	}
}

// bench_pipeline's stage threads come and go with its cases: several
// threads over the run may hold one planned CPU, but every planned CPU
// must have been seen.
func TestVerifyPinningBenchPipeline(t *testing.T) {
	producer := 1
	pl := &artifacts.Threads{Plan: artifacts.PinPlan{AllowedCPUs: "0-3", ProducerCPU: &producer, StageCPUs: []int{2, 3}},
		Processes: []artifacts.ProcessThreads{{Role: artifacts.RolePipeline, Polls: 9, Threads: []artifacts.ThreadReading{
			th(1, "1", 1), th(2, "0-3", 0), th(5, "2", 2), th(6, "3", 3), th(7, "2", 2), th(8, "3", 3)}}}}
	res := VerifyPinning(pl)
	if !res.OK() || len(res.Pinned) != 5 {
		t.Fatalf("%v, %d pinned", res.Problems, len(res.Pinned))
	}
	if list := pinnedList(pl); !strings.Contains(list, "CPU 2 (stage 0): 2 threads over the run, 0 last ran elsewhere") ||
		!strings.Contains(list, "CPU 1 (producer): thread 1, last ran on 1") {
		t.Errorf("pinnedList: %s", list)
	}
	pl.Processes[0].Threads = pl.Processes[0].Threads[:2]
	if res := VerifyPinning(pl); res.OK() {
		t.Fatal("stage CPUs never seen, yet verified")
	}
}

func TestVerifyLoops(t *testing.T) {
	pl := dedicatedThreads()
	if summary, problems := VerifyLoops(pl); len(problems) != 0 || !strings.HasPrefix(summary, "2 of 2 loops accepted and served") {
		t.Fatalf("%q %v", summary, problems)
	}
	pl.Loops[1].Requests = 0
	if _, problems := VerifyLoops(pl); len(problems) != 1 || !strings.Contains(problems[0], "loop 1 accepted 12 connections and served 0 requests") {
		t.Errorf("a loop that served nothing: %v", problems)
	}
	pl.Loops = pl.Loops[:1]
	if _, problems := VerifyLoops(pl); len(problems) == 0 || !strings.Contains(problems[0], "lists 1 loops, the config has 2") {
		t.Errorf("a missing loop: %v", problems)
	}
	pl.MetricsError = "GET /metrics: refused"
	if _, problems := VerifyLoops(pl); len(problems) != 1 || !strings.Contains(problems[0], "refused") {
		t.Errorf("metrics not read: %v", problems)
	}
}

func TestVerifyIdleSleeps(t *testing.T) {
	pl := dedicatedThreads()
	idle := func(perSecond [4]uint64) *artifacts.IdleThreads {
		it := &artifacts.IdleThreads{WindowS: 2}
		for i, cpu := range []int{4, 5, 6, 7} {
			s := artifacts.ThreadReading{TID: 104 + i, AllowedCPUs: fmt.Sprint(cpu), LastCPU: cpu, Voluntary: 1000}
			e := s
			e.Voluntary += 2 * perSecond[i]
			it.Start.Threads = append(it.Start.Threads, s)
			it.End.Threads = append(it.End.Threads, e)
		}
		return it
	}
	pl.Idle = idle([4]uint64{25, 30, 0, 100})
	if summary, problems := VerifyIdleSleeps(pl); len(problems) != 0 || !strings.Contains(summary, "CPU 4: 25/s, CPU 5: 30/s, CPU 6: 0/s, CPU 7: 100/s") {
		t.Fatalf("%q %v", summary, problems)
	}
	pl.Idle = idle([4]uint64{25, 117, 0, 0}) // a pinned spinner that yields, as slow as one was in the guest
	if _, problems := VerifyIdleSleeps(pl); len(problems) != 1 || !strings.Contains(problems[0], "on CPU 5 slept 117 times a second") {
		t.Fatalf("a yielding spinner: %v", problems)
	}
	pl.Idle = nil
	if _, problems := VerifyIdleSleeps(pl); len(problems) != 1 {
		t.Fatalf("no idle readings: %v", problems)
	}
	pl.Plan.PipelineCPUs = nil
	if summary, problems := VerifyIdleSleeps(pl); summary != "" || problems != nil {
		t.Fatalf("nothing pinned: %q %v", summary, problems)
	}
}

func TestProcessThreadsMerge(t *testing.T) {
	p := artifacts.ProcessThreads{Role: artifacts.RolePipeline}
	p.Merge(artifacts.ProcessThreads{Threads: []artifacts.ThreadReading{th(3, "1", 1), th(1, "0-3", 0)}})
	p.Merge(artifacts.ProcessThreads{Threads: []artifacts.ThreadReading{th(3, "1", 1), th(2, "2", 2)}})
	p.Merge(artifacts.ProcessThreads{Error: "gone"})
	if p.Polls != 3 || len(p.Threads) != 3 || p.Threads[0].TID != 1 || p.Threads[2].TID != 3 || p.Error != "" {
		t.Fatalf("%+v", p)
	}
	q := artifacts.ProcessThreads{}
	q.Merge(artifacts.ProcessThreads{Error: "not yet"})
	if q.Error != "not yet" {
		t.Fatalf("an error with nothing read is kept: %+v", q)
	}
}
