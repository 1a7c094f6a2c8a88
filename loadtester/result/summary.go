package result

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"weaseldb/internal/numfmt"
)

// The text a run prints: its progress lines and its end-of-run summary.

func intervalHeader(w io.Writer) {
	fmt.Fprintf(w, "%9s %11s %10s %10s %8s %7s\n", "t(s)", "req/s", "p50", "p99", "errors", "conns")
}

// printInterval writes one progress line. An interval much shorter than
// the stats interval says its length, so a rate over a few milliseconds is
// not read as a whole interval's: the last one of a run whose length is no
// multiple of the interval as "last", any other (an interrupted or aligned
// run's) as "partial".
func printInterval(w io.Writer, iv Interval, warmup, last bool, every time.Duration) {
	tag := ""
	if warmup {
		tag = "  (warm-up, excluded)"
	}
	if every > 0 && iv.LengthS > 0 && iv.LengthS < 0.9*every.Seconds() {
		if last {
			tag += fmt.Sprintf("  (last, %s)", numfmt.Latency(int64(iv.LengthS*1e9)))
		} else {
			tag += fmt.Sprintf("  (partial: %s)", numfmt.Latency(int64(iv.LengthS*1e9)))
		}
	}
	fmt.Fprintf(w, "%9.1f %11.0f %10s %10s %8d %7d%s\n", iv.TS, iv.RequestsPerSec, numfmt.Latency(iv.P50NS),
		numfmt.Latency(iv.P99NS), iv.Errors, iv.OpenConnections, tag)
}

// PrintSummary writes the end-of-run text.
func (r *Result) PrintSummary(w io.Writer) {
	fmt.Fprintf(w, "\n%s: %s in %.2fs, %s", r.Target, numfmt.Count(r.Requests, "request"), r.DurationS, numfmt.Count(r.Errors, "error"))
	if r.Interrupted {
		fmt.Fprint(w, " (interrupted)")
	}
	fmt.Fprintf(w, "\n  requests/sec  %.0f\n", r.RequestsPerSec)
	if r.Due > 0 || r.Version >= 2 {
		fmt.Fprintf(w, "  due           %d = answered %d + failed %d + unfinished %d + dropped %d\n",
			r.Due, r.Answered, r.Failed, r.Unfinished, r.Dropped)
	}
	if r.RateAsked > 0 {
		fmt.Fprintf(w, "  rate asked    %.0f/s\n", r.RateAsked)
	}
	l := r.Latency
	label := "latency     "
	if r.RateAsked > 0 {
		label = "latency (CO)"
	}
	fmt.Fprintf(w, "  %s  p50 %s  p90 %s  p99 %s  p99.9 %s  max %s  mean %s\n", label,
		numfmt.Latency(l.P50), numfmt.Latency(l.P90), numfmt.Latency(l.P99), numfmt.Latency(l.P999), numfmt.Latency(l.Max), numfmt.Latency(int64(l.Mean)))
	if r.RateAsked > 0 {
		fmt.Fprintln(w, "                (CO: coordinated omission corrected, from each request's intended send time)")
		if r.ResponseStamps {
			fmt.Fprintln(w, "                (each response timed by the kernel's receive stamp, read on the client's own wake-ups)")
		}
	}
	if s := r.ServiceLatency; s != nil {
		fmt.Fprintf(w, "  service time  p50 %s  p90 %s  p99 %s  p99.9 %s  max %s  mean %s\n",
			numfmt.Latency(s.P50), numfmt.Latency(s.P90), numfmt.Latency(s.P99), numfmt.Latency(s.P999), numfmt.Latency(s.Max), numfmt.Latency(int64(s.Mean)))
		fmt.Fprintln(w, "                (from each request's actual send: what the server took, not what a user waited)")
	}
	if f := r.FailedLatency; f != nil {
		fmt.Fprintf(w, "  failed latency p50 %s  p90 %s  p99 %s  p99.9 %s  max %s  mean %s\n",
			numfmt.Latency(f.P50), numfmt.Latency(f.P90), numfmt.Latency(f.P99), numfmt.Latency(f.P999), numfmt.Latency(f.Max), numfmt.Latency(int64(f.Mean)))
		fmt.Fprintf(w, "                (the %d failed requests that got a response, a check refused: not in the latency above)\n", r.failedCount())
	}
	if r.Protocol != "" {
		fmt.Fprintf(w, "  protocol      HTTP/2 (%s)\n", r.Protocol)
	}
	if t := r.TLS; t != nil {
		h := t.Handshake
		fmt.Fprintf(w, "  tls           %s %s", t.Version, t.Cipher)
		if t.ALPN != "" {
			fmt.Fprintf(w, ", ALPN %s", t.ALPN)
		}
		fmt.Fprintf(w, "; %d handshakes (%d resumed)\n", t.Handshakes, t.Resumed)
		if t.Handshakes > 0 {
			fmt.Fprintf(w, "  handshake     p50 %s  p90 %s  p99 %s  p99.9 %s  max %s  mean %s\n",
				numfmt.Latency(h.P50), numfmt.Latency(h.P90), numfmt.Latency(h.P99), numfmt.Latency(h.P999), numfmt.Latency(h.Max), numfmt.Latency(int64(h.Mean)))
		}
	}
	if r.LowerBounds > 0 {
		fmt.Fprintf(w, "                %d of these latencies are lower bounds: the %d unfinished and %d dropped requests,\n"+
			"                recorded as the time from when they were due to the end of the drain\n",
			r.LowerBounds, r.Unfinished, r.Dropped)
	}
	r.printKinds(w)
	r.printStages(w)
	r.printChecks(w)
	open := 0
	if n := len(r.Intervals); n > 0 {
		open = r.Intervals[n-1].OpenConnections
	}
	fmt.Fprintf(w, "  connections   %d open at the end, %d opened during the measured run", open, r.ConnectionsOpened)
	if r.ReconnectBackoffs > 0 {
		fmt.Fprintf(w, "; %d reconnects backed off, %.3gs in all, longest %.3gs", r.ReconnectBackoffs, r.ReconnectBackoffS, r.ReconnectBackoffMaxS)
	}
	fmt.Fprintln(w)
	if len(r.ErrorsByKind) > 0 {
		keys := make([]string, 0, len(r.ErrorsByKind))
		for k := range r.ErrorsByKind {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = fmt.Sprintf("%s %d", k, r.ErrorsByKind[k])
		}
		fmt.Fprintf(w, "  errors        %s\n", strings.Join(parts, ", "))
	}
	fmt.Fprintf(w, "  client CPU    %.2fs = %.2f cores (%.0f%% of what its network threads could use; busiest thread %.0f%%), %.0f ns per request\n",
		r.ClientCPUS, r.ClientCPUCores, 100*r.ClientCPUFraction, 100*r.BusiestThreadCPU, r.ClientCPUNsPerReq)
	for _, warn := range r.Warnings {
		fmt.Fprintf(w, "  WARNING: %s\n", warn)
	}
	PrintThresholds(w, r.Thresholds)
}

// printChecks writes each --check's outcome over the measured responses.
func (r *Result) printChecks(w io.Writer) {
	for i, c := range r.Checks {
		label := "checks        "
		if i > 0 {
			label = "              "
		}
		pct := 0.0
		if n := c.Passed + c.Failed; n > 0 {
			pct = 100 * float64(c.Passed) / float64(n)
		}
		fmt.Fprintf(w, "  %s%s: %d passed, %d failed (%.2f%% passed)\n", label, c.Expr, c.Passed, c.Failed, pct)
	}
}
