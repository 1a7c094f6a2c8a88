package loadtester

import (
	"weaseldb/loadtester/check"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// A network thread's books. Ownership: the loop writes measured, warm and
// open while it holds accounts.mu (for one batch of events at a time); the
// collector takes them under the same lock between batches (take), so the
// load goes on while an interval is collected. Each phaseStats' spare is the
// collector's alone. svc and samples are the loop's until it has exited,
// then the collector's.
//
// A request goes into the books of the phase it was due in: before the
// measured window's start, the warm-up's, whenever it ends (docs/
// load_tester.md). Connection-level counts (errors, bytes, connections
// opened) go into the measured books as they happen.
type books struct {
	measured phaseStats
	warm     phaseStats
	open     int // connections up now: a gauge the collector reads, never resets

	svc *hdrhistogram.Histogram // open loop: measured requests' service time, from their actual send
	// --check: the latency of measured requests that got a response a
	// check refused (failed, never answered); the loop's until it exits.
	failedHist *hdrhistogram.Histogram
	// open loop: how late each measured send was that went out more than
	// lateSendThreshold after its intended time while a connection was
	// free (the loop's until it exits).
	lateHist *hdrhistogram.Histogram
	tls      *tlsBooks // https: the handshakes of the connections this thread adopted
	samples  *sampler  // VegetaMax > 0: the measured requests kept for WriteVegeta
	// --check: each check's passes and failures over the measured
	// window's responses (the loop's until it exits, then the collector's).
	checkPass, checkFail []int64
	checkResp            check.Response // the response being judged (reused: no allocation)
}

// tlsBooks are a network thread's TLS handshakes; the loop's until it
// exits, then the collector's (as svc).
type tlsBooks struct {
	hist                *hdrhistogram.Histogram
	handshakes, resumed int64
}

// phaseStats is one phase's counters and latency histogram since the last
// collection.
// hist comes first so that it shares a cache line with the counts a
// response bumps next to it (the counters are 5 KB, mostly the per-status
// array).
type phaseStats struct {
	hist *hdrhistogram.Histogram
	counters
	spare *hdrhistogram.Histogram // the collector's: swapped in for hist by take
}

func newPhaseStats() phaseStats { return phaseStats{hist: newHistogram(), spare: newHistogram()} }

// take hands the counters and histogram gathered since the last collection
// to the collector and starts afresh on the spare (under the thread's lock).
func (p *phaseStats) take() (counters, *hdrhistogram.Histogram) {
	h := p.hist
	p.hist = p.spare
	st := p.counters
	p.counters = counters{}
	return st, h
}

// giveBack returns a taken histogram, emptied, as the next spare (the
// collector, outside the lock: the loop never touches spare).
func (p *phaseStats) giveBack(h *hdrhistogram.Histogram) {
	h.Reset()
	p.spare = h
}
