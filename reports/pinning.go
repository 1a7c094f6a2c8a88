package reports

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"weaseldb/artifacts"
	"weaseldb/internal/affinity"
	"weaseldb/internal/numfmt"
	"weaseldb/plan"
)

// pinnedRole is one planned pinned thread: its CPU and what it is.
type pinnedRole struct {
	cpu  int
	role string
}

var stageNames = []string{"sequence", "resolve", "persist", "release"}

// serverPins lists the server's planned pinned threads.
func serverPins(pp artifacts.PinPlan) []pinnedRole {
	var out []pinnedRole
	for i, c := range pp.IOCPUs {
		out = append(out, pinnedRole{c, fmt.Sprintf("I/O loop %d", i)})
	}
	for s, cpus := range pp.PipelineCPUs {
		for t, c := range cpus {
			name := fmt.Sprintf("stage %d", s)
			if s < len(stageNames) {
				name = stageNames[s]
			}
			if len(cpus) > 1 {
				name = fmt.Sprintf("%s thread %d", name, t)
			}
			out = append(out, pinnedRole{c, name})
		}
	}
	return out
}

// pipelinePins lists bench_pipeline's planned pinned threads.
func pipelinePins(pp artifacts.PinPlan) []pinnedRole {
	var out []pinnedRole
	if pp.ProducerCPU != nil {
		out = append(out, pinnedRole{*pp.ProducerCPU, "producer"})
	}
	for i, c := range pp.StageCPUs {
		out = append(out, pinnedRole{c, fmt.Sprintf("stage %d", i)})
	}
	return out
}

// IdleSleepMaxPerS is how often a pinned commit stage thread may sleep per
// second while the server is idle. A parking strategy sleeps once and stays
// asleep; a spinning one (Never) sleeps only when the Go runtime preempts it,
// every 10 ms at most, so 100 times a second (8-28 measured in the 16-CPU
// TCG guest). A pinned spinner that yields to the scheduler sleeps on every
// yield instead: 117-830 times a second in that guest, thousands on real
// cores (pipeline.MarkPinned).
const IdleSleepMaxPerS = 100

// VerifyIdleSleeps checks that every pinned commit stage thread (by its
// planned CPU) slept at most IdleSleepMaxPerS times a second over the idle
// window. It returns the rates in words and the problems; "" and none when
// nothing is pinned.
func VerifyIdleSleeps(pl *artifacts.Threads) (string, []string) {
	var stageCPUs []int
	for _, cpus := range pl.Plan.PipelineCPUs {
		stageCPUs = append(stageCPUs, cpus...)
	}
	if len(stageCPUs) == 0 {
		return "", nil
	}
	idle := pl.Idle
	if idle == nil || idle.WindowS <= 0 {
		return "", []string{"the threads were not read around the idle window"}
	}
	if idle.Start.Error != "" || idle.End.Error != "" {
		return "", []string{fmt.Sprintf("threads around the idle window not read: %s", strings.Trim(idle.Start.Error+"; "+idle.End.Error, "; "))}
	}
	start := map[int]artifacts.ThreadReading{}
	for _, th := range idle.Start.Threads {
		start[th.TID] = th
	}
	var rates, problems []string
	for _, cpu := range stageCPUs {
		want := affinity.FormatCPUList([]int{cpu})
		i := slices.IndexFunc(idle.End.Threads, func(th artifacts.ThreadReading) bool { return th.AllowedCPUs == want })
		if i < 0 {
			problems = append(problems, fmt.Sprintf("no thread pinned to stage CPU %d at the end of the idle window", cpu))
			continue
		}
		end := idle.End.Threads[i]
		s, ok := start[end.TID]
		if !ok {
			problems = append(problems, fmt.Sprintf("stage thread %d (CPU %d) was not there when the idle window opened", end.TID, cpu))
			continue
		}
		rate := float64(end.Voluntary-s.Voluntary) / idle.WindowS
		rates = append(rates, fmt.Sprintf("CPU %d: %s/s", cpu, numfmt.Format(rate, 0)))
		if rate > IdleSleepMaxPerS {
			problems = append(problems, fmt.Sprintf("stage thread %d on CPU %d slept %s times a second while idle (at most %d: it should park once, or spin without yielding)",
				end.TID, cpu, numfmt.Format(rate, 0), IdleSleepMaxPerS))
		}
	}
	return fmt.Sprintf("pinned stage threads slept while idle (%s s): %s", numfmt.Format(idle.WindowS, 1), strings.Join(rates, ", ")), problems
}

// PinnedThread is one verified pinned thread, for the report.
type PinnedThread struct {
	Role    string // "I/O loop 3", "resolve", "producer", ...
	CPU     int
	TID     int
	LastCPU int
}

// PinningResult is VerifyPinning's verdict: the pinned threads found (with
// what each is), how many threads ran unpinned, and every problem.
type PinningResult struct {
	Pinned   []PinnedThread
	Unpinned int    // threads whose allowed set is the whole set
	Client   string // load_tester's placement, in words ("" when not read)
	Problems []string
}

// OK is true when nothing is wrong.
func (r PinningResult) OK() bool { return len(r.Problems) == 0 }

// Summary says what was verified in one line.
func (r PinningResult) Summary() string {
	var parts []string
	if len(r.Pinned) > 0 {
		parts = append(parts, fmt.Sprintf("%d threads pinned as planned, each last ran on its CPU", len(r.Pinned)))
	} else {
		parts = append(parts, "nothing pinned")
	}
	parts = append(parts, fmt.Sprintf("%d threads on the whole set", r.Unpinned))
	if r.Client != "" {
		parts = append(parts, r.Client)
	}
	if len(r.Problems) > 0 {
		parts = append(parts, strings.Join(r.Problems, "; "))
	}
	return strings.Join(parts, "; ")
}

// VerifyPinning checks the threads read back against the plan:
//
//   - the server (or bench_pipeline): every planned pinned thread exists,
//     with exactly its one CPU as its allowed set, and last ran on that CPU;
//     no other thread is pinned or has any set narrower than the whole
//     allowed set (a mask that leaked from a pinned thread to a thread the
//     runtime made from it would show here);
//   - load_tester: every thread's allowed set is exactly the planned load
//     CPUs (the whole set when none were planned), and each last ran on one
//     of them.
//
// For the server each planned CPU is held by exactly one thread (the plan
// gives every thread a CPU of its own). bench_pipeline's stage threads end
// with each case and new ones start, so there each planned CPU must be held
// by at least one thread, and every pinned thread by a planned one.
func VerifyPinning(pl *artifacts.Threads) PinningResult {
	var res PinningResult
	all, err := affinity.ParseCPUList(pl.Plan.AllowedCPUs)
	if err != nil {
		res.Problems = append(res.Problems, fmt.Sprintf("plan: allowed CPUs: %v", err))
		return res
	}
	allText := affinity.FormatCPUList(all)
	proc, pins, exact := pl.Process(artifacts.RoleServer), serverPins(pl.Plan), true
	if proc == nil {
		proc, pins, exact = pl.Process(artifacts.RolePipeline), pipelinePins(pl.Plan), false
	}
	if proc == nil {
		res.Problems = append(res.Problems, "no server or bench_pipeline threads were read")
		return res
	}
	if proc.Error != "" && len(proc.Threads) == 0 {
		res.Problems = append(res.Problems, fmt.Sprintf("%s threads not read: %s", proc.Role, proc.Error))
		return res
	}
	held := map[int]int{} // CPU -> pinned threads found on it
	for _, th := range proc.Threads {
		switch {
		case th.AllowedCPUs == allText:
			res.Unpinned++
		default:
			cpus, err := affinity.ParseCPUList(th.AllowedCPUs)
			i := slices.IndexFunc(pins, func(p pinnedRole) bool { return err == nil && len(cpus) == 1 && p.cpu == cpus[0] })
			if i < 0 {
				res.Problems = append(res.Problems, fmt.Sprintf("%s thread %d may run on CPUs %s: neither a planned pinned thread nor the whole set %s",
					proc.Role, th.TID, th.AllowedCPUs, allText))
				continue
			}
			held[cpus[0]]++
			res.Pinned = append(res.Pinned, PinnedThread{Role: pins[i].role, CPU: cpus[0], TID: th.TID, LastCPU: th.LastCPU})
			if th.LastCPU != cpus[0] {
				res.Problems = append(res.Problems, fmt.Sprintf("%s thread %d (%s) is pinned to CPU %d but last ran on CPU %d",
					proc.Role, th.TID, pins[i].role, cpus[0], th.LastCPU))
			}
		}
	}
	for _, p := range pins {
		switch n := held[p.cpu]; {
		case n == 0:
			res.Problems = append(res.Problems, fmt.Sprintf("no %s thread pinned to CPU %d (planned for the %s)", proc.Role, p.cpu, p.role))
		case n > 1 && exact:
			res.Problems = append(res.Problems, fmt.Sprintf("%d %s threads pinned to CPU %d (planned for the %s alone)", n, proc.Role, p.cpu, p.role))
		}
	}
	sort.Slice(res.Pinned, func(i, j int) bool { return res.Pinned[i].CPU < res.Pinned[j].CPU })
	if client := pl.Process(artifacts.RoleClient); client != nil {
		res.Client, res.Problems = verifyClient(client, pl.Plan.LoadCPUs, all, res.Problems)
	}
	return res
}

// verifyClient checks load_tester: every thread on the planned set.
func verifyClient(client *artifacts.ProcessThreads, load, all []int, problems []string) (string, []string) {
	want, where := all, "the whole set"
	if len(load) > 0 {
		want, where = load, "its planned CPUs"
	}
	wantText := affinity.FormatCPUList(want)
	if client.Error != "" && len(client.Threads) == 0 {
		return "", append(problems, fmt.Sprintf("load_tester threads not read: %s", client.Error))
	}
	bad := 0
	for _, th := range client.Threads {
		if th.AllowedCPUs != wantText {
			bad++
			problems = append(problems, fmt.Sprintf("load_tester thread %d may run on CPUs %s, want %s (%s)", th.TID, th.AllowedCPUs, wantText, where))
		} else if !slices.Contains(want, th.LastCPU) {
			bad++
			problems = append(problems, fmt.Sprintf("load_tester thread %d last ran on CPU %d, outside %s", th.TID, th.LastCPU, wantText))
		}
	}
	return fmt.Sprintf("load_tester: %d of %d threads on %s (%s)", len(client.Threads)-bad, len(client.Threads), where, wantText), problems
}

// VerifyLoops checks that every one of the server's IOThreads event loops
// accepted connections and served requests. It returns the counts in
// words and the problems.
func VerifyLoops(pl *artifacts.Threads) (string, []string) {
	if pl.MetricsError != "" {
		return "", []string{"per-loop counts not read: " + pl.MetricsError}
	}
	var problems, counts []string
	if n := pl.Plan.IOThreads; len(pl.Loops) != n {
		problems = append(problems, fmt.Sprintf("/metrics lists %d loops, the config has %d", len(pl.Loops), n))
	}
	for _, l := range pl.Loops {
		counts = append(counts, fmt.Sprintf("%d/%d", l.Accepted, l.Requests))
		if l.Accepted == 0 || l.Requests == 0 {
			problems = append(problems, fmt.Sprintf("loop %d accepted %d connections and served %d requests", l.Loop, l.Accepted, l.Requests))
		}
	}
	served := len(pl.Loops)
	for _, l := range pl.Loops {
		if l.Accepted == 0 || l.Requests == 0 {
			served--
		}
	}
	return fmt.Sprintf("%d of %d loops accepted and served (connections/requests by loop: %s)", served, pl.Plan.IOThreads, strings.Join(counts, " ")), problems
}

// PlannedGOMAXPROCS is the GOMAXPROCS weaseldb sets for a config when no
// GOMAXPROCS is in its environment (server/app TuneGOMAXPROCS, which a test
// holds this to): one P per event loop; for a spinning wait strategy one
// more per stage thread (sequence, resolve, persist and the release
// threads); and at least one per pinned thread plus one for the rest.
func PlannedGOMAXPROCS(ioThreads, releaseThreads int, strategy string, pinnedThreads int) int {
	want := max(1, ioThreads)
	if strategy != "WaitIfStageEmpty" {
		want += plan.ServerStageThreads(releaseThreads)
	}
	if pinnedThreads > 0 {
		want = affinity.GOMAXPROCSFor(pinnedThreads, want)
	}
	return want
}
