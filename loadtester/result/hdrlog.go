package result

import (
	"bufio"
	"fmt"
	"io"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// The HdrHistogram interval log (format 1.3: #[StartTime:, #[BaseTime:, the
// legend, then start,length,max,HISTF... per interval; timestamps relative to
// the first interval's start, values in ns), which HdrHistogram's log readers
// and tools read. Errors are returned as the writer met them; callers say
// which output they were writing.

// logWriter writes one log's lines.
type logWriter struct {
	w       *bufio.Writer
	log     *hdrhistogram.HistogramLogWriter
	err     error // the first error: later writes are skipped
	started bool
}

func newLogWriter(w io.Writer) *logWriter {
	bw := bufio.NewWriter(w)
	return &logWriter{w: bw, log: hdrhistogram.NewHistogramLogWriter(bw)}
}

// write appends one interval [start, end]; the first one's start is the
// log's start and base time.
func (l *logWriter) write(hist *hdrhistogram.Histogram, start, end time.Time) {
	if l.err != nil {
		return
	}
	startMs := start.UnixMilli()
	if !l.started {
		l.started = true
		l.log.SetBaseTime(startMs)
		l.keep(l.log.OutputLogFormatVersion())
		l.keep(l.log.OutputComment("[Written by weaseldb load_tester; values in nanoseconds]"))
		l.keep(l.log.OutputStartTime(startMs))
		l.keep(l.log.OutputBaseTime(startMs))
		l.keep(l.log.OutputLegend())
	}
	hist.SetStartTimeMs(startMs)
	hist.SetEndTimeMs(end.UnixMilli())
	l.keep(l.log.OutputIntervalHistogram(hist))
	l.keep(l.w.Flush())
}

// FailedTag tags the log's one line of the failed requests that got a
// response (a check refused them), the whole window's: readers that
// follow tags keep them apart from the untagged intervals of the answered.
const FailedTag = "failed"

// writeFailed appends the failed requests' histogram (nil or empty: no
// line) as one interval [start, end] tagged FailedTag.
func (l *logWriter) writeFailed(h *hdrhistogram.Histogram, start, end time.Time) {
	if h == nil || h.TotalCount() == 0 || !l.started {
		return
	}
	tagged := newHistogram()
	tagged.Merge(h)
	tagged.SetTag(FailedTag)
	l.write(tagged, start, end)
}

func (l *logWriter) keep(err error) {
	if err != nil && l.err == nil {
		l.err = err
	}
}

// HDRLogFile is where an HDRLog goes: a file, which Finish may rewrite from
// its start (*os.File is one).
type HDRLogFile interface {
	io.Writer
	io.Seeker
	Truncate(size int64) error
}

// HDRLog streams a run's interval log as the run goes, so a process stopped
// before the end keeps what it had measured: pass its Interval method as
// Config.OnInterval, then call Finish with the run's result. Interval runs
// on Run's collector goroutine and Finish after Run returned, so it needs no
// lock.
type HDRLog struct {
	f     HDRLogFile
	lw    *logWriter
	spans [][2]time.Time // each interval written: its start and end
}

// NewHDRLog writes the log to f (from where f stands; Finish's rewrite
// starts it over at offset 0).
func NewHDRLog(f HDRLogFile) *HDRLog { return &HDRLog{f: f, lw: newLogWriter(f)} }

// Interval appends one measured interval (Config.OnInterval).
func (h *HDRLog) Interval(iv IntervalReport) {
	h.spans = append(h.spans, [2]time.Time{iv.Start, iv.End})
	h.lw.write(iv.Hist, iv.Start, iv.End)
}

// Finish makes the log final for res, the result of the run it streamed:
// when the lower bounds of requests that never finished landed in
// intervals already written, it rewrites the log from res's intervals. It
// flushes and returns the first error met, but does not close the file.
func (h *HDRLog) Finish(res *Result) error {
	if res.amended {
		h.rewrite(res.Intervals)
	}
	if n := len(h.spans); n > 0 {
		h.lw.writeFailed(res.failedHist, h.spans[0][0], h.spans[n-1][1])
	}
	h.lw.keep(h.lw.w.Flush())
	return h.lw.err
}

// rewrite replaces the log's content with intervals (each with its lower
// bounds), at the times they were first written.
func (h *HDRLog) rewrite(intervals []Interval) {
	lw := h.lw
	if lw.err != nil {
		return
	}
	if len(intervals) != len(h.spans) {
		lw.keep(fmt.Errorf("the result has %d intervals, the log %d: not the run it streamed", len(intervals), len(h.spans)))
		return
	}
	lw.keep(lw.w.Flush())
	if _, err := h.f.Seek(0, io.SeekStart); err != nil {
		lw.keep(err)
		return
	}
	lw.keep(h.f.Truncate(0))
	h.lw = newLogWriter(h.f)
	h.lw.err = lw.err
	for i, iv := range intervals {
		hist := newHistogram()
		if iv.Histogram != "" {
			dec, err := hdrhistogram.Decode([]byte(iv.Histogram))
			if err != nil {
				h.lw.keep(err)
				return
			}
			hist.Merge(dec)
		}
		h.lw.write(hist, h.spans[i][0], h.spans[i][1])
	}
}

// WriteHDRLog writes res's intervals as an interval log whose base time is
// its window's start, from what the result holds (each interval's
// histogram, window_start, t_s and length_s): for a merged result, or any
// result read back. A run's own log is streamed by HDRLog instead, at the
// times its intervals closed.
func WriteHDRLog(w io.Writer, res *Result) error {
	start, err := time.Parse(time.RFC3339Nano, res.WindowStart)
	if err != nil {
		return fmt.Errorf("window_start: %w", err)
	}
	lw := newLogWriter(w)
	var prev int64
	for _, iv := range res.Intervals {
		end := int64(seconds(iv.TS))
		h := newHistogram()
		if iv.Histogram != "" {
			dec, err := decodeHist(iv.Histogram)
			if err != nil {
				return err
			}
			h.Merge(dec)
		}
		lw.write(h, start.Add(time.Duration(max(prev, end-int64(seconds(iv.LengthS))))), start.Add(time.Duration(end)))
		prev = end
	}
	if n := len(res.Intervals); n > 0 {
		first := res.Intervals[0]
		lw.writeFailed(res.failedHist, start.Add(time.Duration(seconds(first.TS-first.LengthS))), start.Add(time.Duration(seconds(res.Intervals[n-1].TS))))
	}
	lw.keep(lw.w.Flush())
	return lw.err
}
