package loadtester

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// hdrLogWriter writes the standard HdrHistogram interval log (format 1.3):
// one histogram per stats interval of the measured run, timestamps relative
// to the run's start, written as the run goes so an interrupted run keeps
// what it measured.
type hdrLogWriter struct {
	f       *os.File
	w       *bufio.Writer
	log     *hdrhistogram.HistogramLogWriter
	err     error
	started bool
}

func newHDRLogWriter(path string) (*hdrLogWriter, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("--hdr-log: %w", err)
	}
	w := bufio.NewWriter(f)
	return &hdrLogWriter{f: f, w: w, log: hdrhistogram.NewHistogramLogWriter(w)}, nil
}

// write appends one interval [startNs, endNs] (ns since base).
func (h *hdrLogWriter) write(hist *hdrhistogram.Histogram, base time.Time, startNs, endNs int64) {
	if h.err != nil {
		return
	}
	startMs := base.Add(time.Duration(startNs)).UnixMilli()
	if !h.started {
		h.started = true
		h.log.SetBaseTime(startMs)
		h.keep(h.log.OutputLogFormatVersion())
		h.keep(h.log.OutputComment("[Written by weaseldb load_tester; values in nanoseconds]"))
		h.keep(h.log.OutputStartTime(startMs))
		h.keep(h.log.OutputBaseTime(startMs))
		h.keep(h.log.OutputLegend())
	}
	hist.SetStartTimeMs(startMs)
	hist.SetEndTimeMs(base.Add(time.Duration(endNs)).UnixMilli())
	h.keep(h.log.OutputIntervalHistogram(hist))
	h.keep(h.w.Flush())
}

// rewrite replaces the log's content with recs (each measured interval,
// after the lower bounds of the requests that never finished were added to
// the interval they were due in). The log was written as the run went, so an
// interrupted process keeps what it had measured; this makes it final.
func (h *hdrLogWriter) rewrite(base time.Time, recs []intervalRecord) {
	if h.err != nil || h.f == nil {
		return
	}
	h.keep(h.w.Flush())
	if _, err := h.f.Seek(0, io.SeekStart); err != nil {
		h.keep(err)
		return
	}
	h.keep(h.f.Truncate(0))
	h.w.Reset(h.f)
	h.log = hdrhistogram.NewHistogramLogWriter(h.w)
	h.started = false
	for _, rec := range recs {
		hist := newHistogram()
		if rec.enc != nil {
			dec, err := hdrhistogram.Decode(rec.enc)
			if err != nil {
				h.keep(err)
				return
			}
			hist.Merge(dec)
		}
		h.write(hist, base, rec.startNs, rec.endNs)
	}
}

func (h *hdrLogWriter) keep(err error) {
	if err != nil && h.err == nil {
		h.err = fmt.Errorf("--hdr-log: %w", err)
	}
}

// close flushes and closes the file once; it returns the first error.
func (h *hdrLogWriter) close() error {
	if h.f == nil {
		return h.err
	}
	h.keep(h.w.Flush())
	h.keep(h.f.Close())
	h.f = nil
	return h.err
}

// writeVegeta writes the sampled results in vegeta's own (gob) encoding,
// which `vegeta report` and `vegeta plot` read. It returns a line saying how
// the results were sampled.
func (r *runner) writeVegeta(res *Result) (string, error) {
	stride := 1
	var seen int64
	for _, t := range r.threads {
		stride = max(stride, t.samples.stride)
		seen += t.samples.seen
	}
	var all []sample
	for _, t := range r.threads {
		t.samples.thin(stride)
		all = append(all, t.samples.kept...)
	}
	sort.Slice(all, func(i, j int) bool { return all[i].start < all[j].start })
	f, err := os.Create(r.cfg.Vegeta)
	if err != nil {
		return "", fmt.Errorf("--vegeta: %w", err)
	}
	w := bufio.NewWriter(f)
	enc := vegeta.NewEncoder(w)
	url, method := r.cfg.TargetURL(), r.cfg.Method
	bytesOut := uint64(len(r.tmpl.static))
	if sent := res.Answered + res.Failed + res.Unfinished; r.tmpl.dynamic() && sent > 0 {
		bytesOut = uint64(res.BytesOut / sent) // requests differ: the mean size
	}
	for i, s := range all {
		v := vegeta.Result{Attack: "load_tester", Seq: uint64(i), Code: s.code,
			Timestamp: r.base.Add(time.Duration(s.start)), Latency: time.Duration(s.latency),
			BytesOut: bytesOut, Method: method, URL: url, Headers: http.Header{}}
		if s.errKind > 0 {
			v.Error = s.errorName()
		} else if s.code < 200 || s.code >= 400 {
			v.Error = http.StatusText(int(s.code))
			if v.Error == "" {
				v.Error = fmt.Sprintf("status %d", s.code)
			}
		}
		if err := enc.Encode(&v); err != nil {
			f.Close()
			return "", fmt.Errorf("--vegeta: %w", err)
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return "", fmt.Errorf("--vegeta: %w", err)
	}
	if err := f.Close(); err != nil {
		return "", fmt.Errorf("--vegeta: %w", err)
	}
	res.VegetaSampleEvery = stride
	if stride == 1 {
		return fmt.Sprintf("vegeta: wrote all %d results to %s", len(all), r.cfg.Vegeta), nil
	}
	return fmt.Sprintf("vegeta: wrote %d of %d results to %s: every %d-th result of each network thread, evenly spaced over the run (--vegeta-max %d)",
		len(all), seen, r.cfg.Vegeta, stride, r.cfg.VegetaMax), nil
}
