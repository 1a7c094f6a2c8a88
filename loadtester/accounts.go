package loadtester

import "sync"

// A network thread's accounting, in one type the thread owns: what is
// counted where (books: counts.go; each kind's and stage's books:
// kinds.go, stages.go), the rules that book a response or a failure
// (record.go, checks.go's judge) and the measured window as the thread
// sees it (window.go). "Books" is this package's word for those counts:
// the warm-up's and the measured window's counters and histograms, and
// what a kind or a stage keeps of its own.
//
// Who owns what: the thread's loop writes everything here, holding mu for
// one batch of events at a time; the collector takes the interval counts
// and histograms out of books under mu between batches (collector.go).
// The per-kind and per-stage books, the window's tail and the books the
// collector does not take each interval (svc, failedHist, lateHist, tls,
// samples, checkPass/checkFail) are the loop's until it exits, then the
// collector's.

// accounts is a network thread's accounting. It exists so that booking
// has one owner: the loop and the protocols' reports (connEvents) say
// what happened, and accounts decides whose books it goes in; the thread
// keeps its loop and its connections.
type accounts struct {
	r    *runner   // the kinds, their checks and the stage plan: read-only while the loop runs
	pace *pacer    // the thread's pacer: where the open loop's stages start (stageClock)
	rend *renderer // the thread's renderer, told which {{seq}} was answered (nil without placeholders)

	mu    sync.Mutex // held by the loop for one batch of events, by the collector to take the books
	books books      // guarded by mu (counts.go)
	kb    []groupBooks
	sb    []groupBooks
	win   window // the measured window and its drain (window.go)
}

// init makes a the accounting of a thread of r whose pacer is pace and
// renderer rend: every book the run's flags ask for, created up front so
// the loop never allocates one.
func (a *accounts) init(r *runner, pace *pacer, rend *renderer) {
	a.r, a.pace, a.rend = r, pace, rend
	a.books = books{measured: newPhaseStats(), warm: newPhaseStats()}
	a.win = window{start: r.mStart, closeAt: r.windowEnd.Load(), drainFor: int64(r.cfg.drain())}
	if r.cfg.OpenLoop() {
		a.books.svc = newHistogram()
		a.books.lateHist = newHistogram()
	}
	if r.cfg.Workload != nil {
		a.kb = make([]groupBooks, len(r.kinds)) // workload: each kind's measured counts (kinds.go)
		for i := range a.kb {
			a.kb[i] = newGroupBooks(r.cfg.OpenLoop(), r.checks != nil)
		}
	}
	if r.stagePlan != nil {
		a.sb = make([]groupBooks, len(r.stagePlan.stages)) // --stages: each stage's measured counts (stages.go)
		for i := range a.sb {
			a.sb[i] = newGroupBooks(false, r.checks != nil)
		}
	}
	if r.checks != nil {
		a.books.failedHist = newHistogram()
	}
	if r.cfg.VegetaMax > 0 {
		a.books.samples = newSampler(max(1, r.cfg.VegetaMax/r.cfg.NetworkThreads))
	}
	if r.cfg.TLS != nil {
		a.books.tls = &tlsBooks{hist: newHistogram()}
	}
}
