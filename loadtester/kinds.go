package loadtester

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"weaseldb/loadtester/datafeed"
	"weaseldb/loadtester/result"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Request kinds of a workload (workload.go) as a run sends and counts them.
//
// Who owns what: the runner's kinds and table are set before any thread
// starts and read-only after. A network thread's groupBooks are its loop's
// alone while it runs (no lock: the collector reads them only once every
// loop has exited, to build Result.Kinds), like its service histogram.
//
// Each request's kind is known when it is sent and rides in its
// connection's ring beside its due time, so every due request is counted
// once in its kind's books too: answered and failed as they happen,
// unfinished from the ring when the window closes, and dropped (never
// sent, so never in a ring) from the schedule, whose k-th request has the
// kind table[k % len(table)] whether it was sent or not.

// kindSpec is one kind of request as the run sends it.
type kindSpec struct {
	RequestKind
	tmpl     *requestTemplate
	referred bool  // a {{answered:...}} names it: the seqs of its answers are tracked
	checks   []int // the checks its responses must pass (runner.checks): every --check, then its own
}

// groupBooks is one group's measured-window counts on one network thread:
// a kind's (kinds.go) or a stage's (stages.go).
type groupBooks struct {
	hist *hdrhistogram.Histogram // latency (from the due time), lower bounds added by the collector
	svc  *hdrhistogram.Histogram // rate mode: service time
	// failedHist: the latency of failed requests that got a response (a
	// check refused it); nil without checks.
	failedHist *hdrhistogram.Histogram
	answered   int64
	failed     int64
	status     [maxStatus + 1]int64
}

func newGroupBooks(rate, checks bool) groupBooks {
	kb := groupBooks{hist: newHistogram()}
	if rate {
		kb.svc = newHistogram()
	}
	if checks {
		kb.failedHist = newHistogram()
	}
	return kb
}

// newKinds builds the run's kinds: the workload's, each with the config's
// own headers first, or the one kind the config describes. run replaces
// {{run}} (runID) before anything else, so the bytes of a request without
// other placeholders are still formatted once.
func newKinds(cfg *Config, run string) ([]kindSpec, []uint8, error) {
	w := cfg.Workload
	sub := func(s string) string { return strings.ReplaceAll(s, placeholderRun, run) }
	subAll := func(list []string) []string {
		out := make([]string, len(list))
		for i, s := range list {
			out[i] = sub(s)
		}
		return out
	}
	if w == nil {
		k := RequestKind{Name: "request", Weight: 1, Method: cfg.Method, Path: cfg.Path, Headers: cfg.Headers, Body: cfg.Body, Feed: cfg.Data}
		tmpl, err := newRequestTemplate(cfg.Method, sub(cfg.Path), cfg.hostHeader(), subAll(cfg.Headers),
			[]byte(sub(string(cfg.Body))), placeholders{columns: k.columns(), feed: k.Feed})
		if err != nil {
			return nil, nil, fmt.Errorf("--path/--header/--body: %w", err)
		}
		return []kindSpec{{RequestKind: k, tmpl: tmpl}}, []uint8{0}, nil
	}
	table, err := kindTable(w.weights())
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrWorkload, err)
	}
	kinds := make([]kindSpec, len(w.Kinds))
	for i, k := range w.Kinds {
		if k.Feed == nil {
			k.Feed = cfg.Data
		}
		headers := subAll(append(append([]string(nil), cfg.Headers...), k.Headers...))
		tmpl, err := newRequestTemplate(k.Method, sub(k.Path), cfg.hostHeader(), headers, []byte(sub(string(k.Body))),
			placeholders{kinds: w.resolver(), columns: k.columns(), feed: k.Feed})
		if err != nil {
			return nil, nil, fmt.Errorf("%w: request %s: %w", ErrWorkload, k.Name, err)
		}
		kinds[i] = kindSpec{RequestKind: k, tmpl: tmpl}
		for _, segs := range [][]segment{tmpl.head, tmpl.body} {
			for _, s := range segs {
				if s.kind == segAnswered {
					kinds[s.n].referred = true
				}
			}
		}
	}
	return kinds, table, nil
}

// columns resolves a kind's {{data.COLUMN}} in its data file (nil: none).
func (k *RequestKind) columns() columnResolver {
	if k.Feed == nil {
		return nil
	}
	return k.Feed.Column
}

// numberFeeds lists the data files the kinds read, each once, and tells
// each kind's template which it takes rows of: kinds that share a file
// share its rows (under once, each row goes to one request of either).
func numberFeeds(kinds []kindSpec) []*datafeed.Feed {
	var feeds []*datafeed.Feed
	for _, k := range kinds {
		t := k.tmpl
		if k.Feed == nil || !usesData(t.head, t.body) {
			continue
		}
		t.feed = slices.Index(feeds, k.Feed)
		if t.feed < 0 {
			t.feed = len(feeds)
			feeds = append(feeds, k.Feed)
		}
	}
	return feeds
}

// runID is the run's {{run}}: eight hex digits from the run's seed, so
// that ids made of {{run}} and {{seq}} differ from one run to the next
// (against a server that remembers ids, a second run would otherwise
// repeat the first one's).
func runID(seed int64) string {
	x := uint64(seed)
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	return fmt.Sprintf("%08x", uint32(x))
}

// kindOf is the kind of the schedule's k-th request (open loop) or of a
// thread's k-th send (closed loop).
func (r *runner) kindOf(k uint64) uint8 { return r.table[k%uint64(len(r.table))] }

// kindCounts calls fn with how many of the requests k in [from, to) are of
// each kind: whole turns of the table, then the rest one by one.
func (r *runner) kindCounts(from, to uint64, fn func(kind uint8, n int64)) {
	if to <= from {
		return
	}
	n, l := to-from, uint64(len(r.table))
	counts := make([]int64, len(r.kinds))
	if turns := n / l; turns > 0 {
		for _, k := range r.table {
			counts[k] += int64(turns)
		}
	}
	for i := range n % l {
		counts[r.kindOf(from+i)]++
	}
	for k, c := range counts {
		if c > 0 {
			fn(uint8(k), c)
		}
	}
}

// groupTally is the collector's sum of one group over the threads: a
// kind's or a stage's.
type groupTally struct {
	hist, svc           *hdrhistogram.Histogram
	failedHist          *hdrhistogram.Histogram // failed with a response (nil: none yet)
	answered, failed    int64
	unfinished, dropped int64
	status              [maxStatus + 1]int64
}

// kindResults builds Result.Kinds from the tallies (nil without a workload).
func (c *collector) kindResults(dur float64) []result.KindResult {
	r := c.r
	if r.cfg.Workload == nil {
		return nil
	}
	total := 0
	for _, k := range r.kinds {
		total += k.Weight
	}
	out := make([]result.KindResult, len(r.kinds))
	for i, k := range r.kinds {
		t := &c.kinds[i]
		kr := result.KindResult{Name: k.Name, Method: k.Method, Path: k.Path, Weight: k.Weight,
			Share: float64(k.Weight) / float64(total), Answered: t.answered, Failed: t.failed,
			Unfinished: t.unfinished, Dropped: t.dropped, Latency: latencyOf(t.hist),
			StatusCodes: map[string]int64{}}
		kr.SetHistograms(t.hist, nil)
		kr.SetFailedHistogram(t.failedHist)
		kr.Due = kr.Answered + kr.Failed + kr.Unfinished + kr.Dropped
		for code, n := range t.status {
			if n > 0 {
				kr.StatusCodes[strconv.Itoa(code)] = n
				if code >= 200 && code < 300 {
					kr.Successes += n
				}
			}
		}
		if dur > 0 {
			kr.RequestsPerSec = float64(kr.Answered) / dur
		}
		if enc, err := t.hist.Encode(hdrhistogram.V2CompressedEncodingCookieBase); err == nil {
			kr.Histogram = string(enc)
		}
		if t.svc != nil {
			l := latencyOf(t.svc)
			kr.ServiceLatency = &l
			kr.SetHistograms(t.hist, t.svc)
			if enc, err := t.svc.Encode(hdrhistogram.V2CompressedEncodingCookieBase); err == nil {
				kr.ServiceHistogram = string(enc)
			}
		}
		out[i] = kr
	}
	return out
}

// gatherKinds adds every thread's kind books into the collector's tallies
// (after every loop has exited).
func (c *collector) gatherKinds() {
	r := c.r
	if r.cfg.Workload == nil {
		return
	}
	c.kinds = make([]groupTally, len(r.kinds))
	for i := range c.kinds {
		c.kinds[i].hist = newHistogram()
		if r.cfg.OpenLoop() {
			c.kinds[i].svc = newHistogram()
		}
	}
	for _, t := range r.threads {
		mergeGroups(c.kinds, t.acct.kb)
	}
}

// mergeGroups adds one thread's books of each group into the tallies.
func mergeGroups(tallies []groupTally, books []groupBooks) {
	for i := range books {
		b, tl := &books[i], &tallies[i]
		tl.hist.Merge(b.hist)
		if b.svc != nil && tl.svc != nil {
			tl.svc.Merge(b.svc)
		}
		if b.failedHist != nil {
			if tl.failedHist == nil {
				tl.failedHist = newHistogram()
			}
			tl.failedHist.Merge(b.failedHist)
		}
		tl.answered += b.answered
		tl.failed += b.failed
		for s, n := range b.status {
			tl.status[s] += n
		}
	}
}

// kindBound records n lower bounds of value v for kind k (a request that
// never finished); svc, when >= 0, is its service-time lower bound.
func (c *collector) kindBound(k uint8, v, svc, n int64, unfinished bool) {
	if c.kinds == nil {
		return
	}
	c.kinds[k].addBound(v, svc, n, unfinished)
}

// addBound records n lower bounds of value v in the group (requests that
// never finished: unfinished, else dropped); svc, when >= 0, is their
// service-time lower bound.
func (t *groupTally) addBound(v, svc, n int64, unfinished bool) {
	if unfinished {
		t.unfinished += n
	} else {
		t.dropped += n
	}
	t.hist.RecordValues(v, n)
	if svc >= 0 && t.svc != nil {
		t.svc.RecordValues(svc, n)
	}
}

// checkKinds: the kinds' counts must add up to the run's.
func (c *collector) checkKinds(res *result.Result) {
	var sums groupSums
	for _, k := range res.Kinds {
		sums.add(k.Due, k.Answered, k.Failed, k.Unfinished, k.Dropped)
	}
	sums.check(res, "kinds", res.Kinds != nil)
}

// groupSums adds up the accounting of a run's groups (kinds or stages).
type groupSums struct{ due, answered, failed, unfinished, dropped int64 }

func (s *groupSums) add(due, answered, failed, unfinished, dropped int64) {
	s.due += due
	s.answered += answered
	s.failed += failed
	s.unfinished += unfinished
	s.dropped += dropped
}

// check warns when the groups (named by what; present: the run has them)
// do not add up to the run's counts: a bug of this tool, which says so.
func (s groupSums) check(res *result.Result, what string, present bool) {
	if !present || s == (groupSums{res.Due, res.Answered, res.Failed, res.Unfinished, res.Dropped}) {
		return
	}
	res.Warnings = append(res.Warnings, fmt.Sprintf(
		"accounting mismatch (a load_tester bug; please report it): the %s add up to due %d = answered %d + failed %d + unfinished %d + dropped %d, the run has due %d = %d + %d + %d + %d",
		what, s.due, s.answered, s.failed, s.unfinished, s.dropped, res.Due, res.Answered, res.Failed, res.Unfinished, res.Dropped))
}
