package callgrind

import (
	"regexp"
	"strings"
)

// The cost tier's filter: the functions whose instructions follow the clock
// (how long the server waited, how often a thread woke, which thread the
// scheduler ran), not the requests. Under valgrind the server's threads
// take turns on one lock, so whether a stage catches the next item while
// spinning or parks, how often sysmon wakes and how long an idle M looks
// for work all change from run to run; on this machine they moved the
// unfiltered count of 1,000 GET /ok by 3-7% between A/A runs, and the
// filtered count by 0.1-0.2% (docs/gate.md, "The cost tier"). Each group
// says why it is left out. Matching is on the whole function name after
// the recursion suffix is stripped (baseFunction).
type costFilterGroup struct {
	Why     string
	Pattern *regexp.Regexp
}

// costFilter is documented in docs/gate.md; keep the two in step.
var costFilter = []costFilterGroup{
	{"the Go scheduler looking for work, handing Ps and Ms around, and its locks", anchored(`runtime\.(` +
		`schedule|findRunnable|stealWork|runqsteal|runqgrab|runqget|runqput.*|globrunq.*|checkRunqsNoP|checkTimersNoP|checkIdleGCNoP|` +
		`pidleput|pidleget|pidlegetSpinning|startm|stopm|startlockedm|stoplockedm|handoffp|wakep|resetspinning|mPark|mget|mput|` +
		`acquirep.*|releasep.*|wirep|lock2|unlock2|unlock2Wake|lockWithRank|unlockWithRank|lock|unlock|` +
		`execute|mcall|park_m|gopark|goready.*|ready|readyWithTime.*|casgstatus|castogscanstatus|casfrom_Gscanstatus|` +
		`gosched_m|goschedImpl|gopreempt_m|preemptone|preemptall|systemstack.*|gogo.*|` +
		`\(\*m\)\.snapshotAllp|\(\*m\)\.clearAllpSnapshot|\(\*gcControllerState\)\..*|\(\*limiterEvent\)\..*|\(\*listHeadManual\)\..*|` +
		`\(\*timers\)\..*|\(\*mcache\)\.prepareForSweep|gcTrigger\.test)`)},
	{"threads sleeping and waking (futexes, notes, the system-call hand-off of a P)", anchored(`runtime\.(` +
		`notesleep|notetsleep|notetsleep_internal|notetsleepg|notewakeup|futex.*|usleep.*|osyield.*|procyield.*|nanotime.*|` +
		`exitsyscall.*|entersyscall.*|reentersyscall|setBlockOnExitSyscall|syscallingThread\..*|` +
		`netpoll|netpollBreak|acquireSudog|releaseSudog|parkunlock_c)|gosave_systemstack_switch|gogo`)},
	{"OS threads the runtime starts when it sees fit", anchored(
		`runtime\.(newm|newm1|newosproc.*|allocm|mstart.*|minit|minitSignal.*|mcommoninit|clone.*|mexit|startTemplateThread|templateThread)|` +
			`clone.*|pthread_.*|arena_get2|start_thread`)},
	{"sysmon, the runtime's watchdog thread, which wakes on a timer", anchored(`runtime\.(sysmon|retake|checkdead|incidlelocked|timeSleepUntil)`)},
	{"the garbage collector's background work (the cost runs set GOGC=off; allocation is counted apart)", anchored(`runtime\.(` +
		`gcBgMarkWorker.*|gcDrain.*|gcMarkDone|gcMarkTermination|markroot.*|scanobject|scanObject.*|scanstack|scanblock|greyobject|findObject|` +
		`bgsweep|bgscavenge|sweepone|\(\*sweepLocked\)\..*|\(\*mspan\)\.sweep|\(\*scavengerState\)\..*|typePointers\..*|tryDeferToSpanScan|extractHeapBitsSmall)`)},
	{"the page allocator growing the heap (with GOGC=off the heap only grows, and whether it crosses a boundary inside the window depends on what the setup allocated)", anchored(
		`runtime\.(\(\*pageAlloc\)\..*|\(\*pallocBits\)\..*|\(\*pallocData\)\..*|mergeSummaries|\(\*mheap\)\.grow|\(\*mheap\)\.sysAlloc|sysGrow.*|sysMap.*|sysUsed.*|sysHugePage.*)`)},
	{"a pipeline stage spinning or parking while it waits for the next item", anchored(
		`weaseldb/server/pipeline\.(\(\*counter\)\.(park|wake).*|spinWhile.*|\(\*spinner\)\..*|runtimeCanSpin)|` +
			`sync\.runtime_canSpin|sync\.runtime_notifyList.*|sync\.\(\*Cond\)\..*|runtime\.sync_runtime_canSpin|runtime\.notifyList.*`)},
	{"a latency histogram's bucket search, whose steps depend on the latency measured", anchored(
		`github\.com/prometheus/client_golang/prometheus\.\(\*histogram\)\.findBucket`)},
}

func anchored(expr string) *regexp.Regexp { return regexp.MustCompile(`^(?:` + expr + `)$`) }

// filteredOut reports whether a function's own cost is left out, and why.
func filteredOut(fn string) (bool, string) {
	for _, g := range costFilter {
		if g.Pattern.MatchString(fn) {
			return true, g.Why
		}
	}
	return false, ""
}

// KeptFunctions are the functions the cost tier counts, with their own
// instructions (names trimmed as the filter reads them), and the
// instructions of those it leaves out. Functions valgrind could not name
// ("0x..." addresses) are counted: nothing says they wait.
func KeptFunctions(p *Profile) (kept map[string]int64, left int64) {
	kept = make(map[string]int64, len(p.Self))
	for fn, v := range p.Self {
		fn = strings.TrimSpace(fn)
		if out, _ := filteredOut(fn); out {
			left += v
		} else {
			kept[fn] += v
		}
	}
	return kept, left
}

// FilteredInstructions splits a profile's instructions into those the cost
// tier counts and those it leaves out (KeptFunctions, summed).
func FilteredInstructions(p *Profile) (kept, left int64) {
	fns, left := KeptFunctions(p)
	for _, v := range fns {
		kept += v
	}
	return kept, left
}
