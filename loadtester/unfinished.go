package loadtester

import (
	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// The collector's side of the window's end (collector goroutine only, after
// every network thread has exited): each thread's unfinished and dropped
// requests are counted in the interval they were due in, and their lower
// bounds (the end of the thread's drain minus when they were due) go into
// the run's histogram and that interval's. The Result says when intervals
// already reported (OnInterval) changed, so a streamed HDR log is rewritten.

// maxBoundValues caps the values recorded one by one for the dropped
// requests of one interval; beyond it, each recorded value stands for an
// evenly spaced run of requests (their lower bounds differ by less than the
// run's span), so a long stall at a high rate stays cheap to account.
const maxBoundValues = 1 << 20

// accountTails counts and records every thread's tail.
func (c *collector) accountTails() {
	amended := map[int]*hdrhistogram.Histogram{}
	ivHist := func(i int) *hdrhistogram.Histogram {
		if h, ok := amended[i]; ok {
			return h
		}
		h := newHistogram()
		if enc := c.ivRecs[i].enc; enc != nil {
			if dec, err := hdrhistogram.Decode(enc); err == nil {
				h.Merge(dec)
			}
		}
		amended[i] = h
		return h
	}
	for _, t := range c.r.threads {
		tl := &t.acct.win.tail
		c.warmUnfinished += tl.warmUnfinished
		c.warmDropped += tl.warmDropped
		c.scheduled += tl.scheduled
		if len(c.ivRecs) == 0 { // the window closed before it opened
			continue
		}
		for _, p := range tl.unfinished {
			i := c.intervalOf(p.due)
			c.intervals[i].Unfinished++
			c.unfinished++
			c.recordBound(tl.endNs-p.due, 1, ivHist(i))
			if b := &t.acct.books; b.svc != nil {
				b.svc.RecordValue(tl.endNs - p.sent)
			}
			c.kindBound(p.kind, tl.endNs-p.due, tl.endNs-p.sent, 1, true)
			if t.acct.sb != nil {
				c.stageBound(t.acct.stageOf(p.due), tl.endNs-p.due, 1, true)
			}
			if s := t.acct.books.samples; s != nil {
				s.add(sample{start: p.due, latency: tl.endNs - p.due, errKind: sampleUnfinished, kind: p.kind})
			}
		}
		c.accountDropped(t, ivHist)
	}
	for i, h := range amended {
		iv := &c.intervals[i]
		iv.P50NS, iv.P99NS = h.ValueAtQuantile(50), h.ValueAtQuantile(99)
		if enc, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase); err == nil {
			c.ivRecs[i].enc = enc
		}
		c.amended = true
	}
}

// accountDropped records a thread's dropped requests, interval by interval.
func (c *collector) accountDropped(t *netThread, ivHist func(int) *hdrhistogram.Histogram) {
	tl, p, samples := &t.acct.win.tail, &t.pace, t.acct.books.samples
	for k := tl.dropFrom; k < tl.dropTo; {
		i := c.intervalOf(p.dueAt(k))
		end := tl.dropTo
		if i+1 < len(c.ivRecs) {
			end = min(end, max(p.firstDueAtOrAfter(c.ivRecs[i].endNs), k+1))
		}
		stage := -1
		if t.acct.sb != nil { // a run of drops stays within one stage too
			stage = t.acct.stageOf(p.dueAt(k))
			if stage+1 < len(t.acct.sb) {
				end = min(end, max(p.firstDueAtOrAfter(t.acct.stageEndAbs(stage)), k+1))
			}
		}
		n := end - k
		c.intervals[i].Dropped += int64(n)
		c.dropped += int64(n)
		h := ivHist(i)
		stride := max(1, n/maxBoundValues)
		for j := k; j < end; j += stride {
			count := min(stride, end-j)
			due := p.dueAt(j + count/2)
			c.recordBound(tl.endNs-due, int64(count), h)
			if c.kinds != nil {
				c.r.kindCounts(j, j+count, func(kind uint8, n int64) { c.kindBound(kind, tl.endNs-due, -1, n, false) })
			}
			if stage >= 0 {
				c.stageBound(stage, tl.endNs-due, int64(count), false)
			}
			if samples != nil {
				for m := range count {
					d := p.dueAt(j + m)
					samples.add(sample{start: d, latency: tl.endNs - d, errKind: sampleDropped, kind: c.r.kindOf(j + m)})
				}
			}
		}
		k = end
	}
}

// recordBound records n lower bounds of value v in the run's histogram and
// in the interval's.
func (c *collector) recordBound(v, n int64, interval *hdrhistogram.Histogram) {
	c.lowerBounds += n
	if err := c.total.RecordValues(v, n); err != nil {
		c.counts.recordErrors += n
		return
	}
	interval.RecordValues(v, n)
}

// intervalOf is the measured interval a due time falls in.
func (c *collector) intervalOf(due int64) int {
	i := int((due - c.r.mStart) / int64(c.r.cfg.StatsInterval))
	return min(max(i, 0), len(c.ivRecs)-1)
}
