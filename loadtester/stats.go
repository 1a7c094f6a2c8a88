package loadtester

import (
	"strconv"
	"time"
	"weaseldb/loadtester/result"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

func newHistogram() *hdrhistogram.Histogram { return result.NewHistogram() }

// errorKind classifies failures; each non-2xx status is counted separately.
type errorKind uint8

const (
	errConnectRefused errorKind = iota
	errConnectTimeout
	errConnect // any other connect failure
	errReset   // ECONNRESET / EPIPE while reading or writing
	errEOF     // the server closed with requests unanswered
	errTimeout // no response within --timeout
	errParse   // a response that is not HTTP/1.x
	errIO      // any other read or write failure
	errTLS     // https: a failed TLS handshake, or a TLS record or alert the client cannot take
	// errTruncated: https, a body delimited by the connection's close
	// ended without the server's close_notify (RFC 9112 §9.8), so it may
	// have been cut short.
	errTruncated
	// errHeaderTooLarge: HTTP/2, a response header list over the limit
	// the client advertises (h2headers.go), or a request header list over
	// the server's SETTINGS_MAX_HEADER_LIST_SIZE (never sent).
	errHeaderTooLarge
	// errCheck: a response arrived but failed a --check (a 200 carrying
	// an error payload, say): failed, never answered.
	errCheck
	numErrorKinds
)

var errorKindNames = [numErrorKinds]string{
	"connect_refused", "connect_timeout", "connect_error", "reset", "eof",
	"timeout", "parse_error", "io_error", "tls_error", "truncated",
	"header_too_large", "check",
}

func (k errorKind) String() string { return errorKindNames[k] }

// maxStatus bounds the per-status counters; anything larger counts as 599+.
const maxStatus = 600

// counters is what a network thread counts between two collections. The
// collector takes them under the thread's lock and zeroes them. The
// request-level counts (requests, sent, failedBy, status, recordErrors,
// lateSends, waitedForConn) belong to the phase the request was due in; the
// connection-level ones (errors, bytes, connsOpened, the back-offs) to the
// time they happened.
type counters struct {
	requests      int64                // responses received (any status): answered requests
	sent          int64                // requests written (a check on the other counts)
	failedBy      [numErrorKinds]int64 // requests lost without a response, by kind
	errors        [numErrorKinds]int64 // failures of a connection with no request in flight
	status        [maxStatus + 1]int64 // responses by status; the last slot is >= 600
	bytesIn       int64
	bytesOut      int64
	connsOpened   int64
	recordErrors  int64 // latencies outside the histogram's range
	lateSends     int64 // open loop: sends late by > lateSendThreshold while a connection was free
	waitedForConn int64 // open loop: requests that found every connection busy when due

	// Reconnects that backed off (connect.go) before their attempt, and
	// how long they waited in all and at most (ns).
	backoffs, backoffNs, backoffMaxNs int64
}

func (c *counters) add(o *counters) {
	c.requests += o.requests
	c.sent += o.sent
	for i := range c.errors {
		c.errors[i] += o.errors[i]
		c.failedBy[i] += o.failedBy[i]
	}
	for i := range c.status {
		c.status[i] += o.status[i]
	}
	c.bytesIn += o.bytesIn
	c.bytesOut += o.bytesOut
	c.connsOpened += o.connsOpened
	c.backoffs += o.backoffs
	c.backoffNs += o.backoffNs
	c.backoffMaxNs = max(c.backoffMaxNs, o.backoffMaxNs)
	c.recordErrors += o.recordErrors
	c.lateSends += o.lateSends
	c.waitedForConn += o.waitedForConn
}

// bookBackoff counts a reconnect that waited d before its attempt (0: none).
func (c *counters) bookBackoff(d time.Duration) {
	if d <= 0 {
		return
	}
	c.backoffs++
	c.backoffNs += int64(d)
	c.backoffMaxNs = max(c.backoffMaxNs, int64(d))
}

// requestLevel is the part of c that belongs to the requests' phase.
func (c *counters) requestLevel() counters {
	return counters{requests: c.requests, sent: c.sent, failedBy: c.failedBy, status: c.status,
		recordErrors: c.recordErrors, lateSends: c.lateSends, waitedForConn: c.waitedForConn}
}

// failed counts requests lost without a response.
func (c *counters) failed() int64 {
	var n int64
	for _, e := range c.failedBy {
		n += e
	}
	return n
}

// failedStatuses counts responses whose status is not 2xx.
func (c *counters) failedStatuses() int64 {
	var n int64
	for code, count := range c.status {
		if code < 200 || code >= 300 {
			n += count
		}
	}
	return n
}

// totalErrors is failed requests and failed connects, non-2xx included.
func (c *counters) totalErrors() int64 {
	n := c.failedStatuses() + c.failed()
	for _, e := range c.errors {
		n += e
	}
	return n
}

// successes are 2xx responses.
func (c *counters) successes() int64 { return c.requests - c.failedStatuses() }

// errorsByKind names every non-zero error count.
func (c *counters) errorsByKind() map[string]int64 {
	m := map[string]int64{}
	for k := range c.errors {
		if n := c.errors[k] + c.failedBy[k]; n > 0 {
			m[errorKind(k).String()] = n
		}
	}
	for code, n := range c.status {
		if n > 0 && (code < 200 || code >= 300) {
			name := "status_" + strconv.Itoa(code)
			if code == maxStatus {
				name = "status_600_or_more"
			}
			m[name] = n
		}
	}
	return m
}

// statusCodes maps every status seen to its count.
func (c *counters) statusCodes() map[string]int64 {
	m := map[string]int64{}
	for code, n := range c.status {
		if n > 0 {
			m[strconv.Itoa(code)] = n
		}
	}
	return m
}

func latencyOf(h *hdrhistogram.Histogram) result.Latency { return result.LatencyOf(h) }
