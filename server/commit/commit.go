// Package commit is the server's 4-stage commit pipeline, after the seed's:
// sequence (versions), resolve (preconditions; GET /ok spends its configured
// spin work here; never blocks), persist (builds the responses) and release
// (its threads split each batch by index and send every response to its
// connection). It runs on server/pipeline with topology {1, 1, 1, release}.
package commit

import (
	"bytes"
	"fmt"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"weaseldb/server/affinity"
	"weaseldb/server/cpuwork"
	"weaseldb/server/eventloop"
	"weaseldb/server/http1"
	"weaseldb/server/metrics"
	"weaseldb/server/pipeline"
)

// Kind says what an entry asks for. Issue 8 adds commit, status and
// subscribe kinds; an entry's Payload carries their parsed request.
type Kind uint8

// Entry kinds.
const (
	KindShutdown Kind = iota // one per release thread ends the pipeline
	KindOK                   // GET /ok: spin work in resolve, {"status":"ok"}
	KindVersion              // GET /v1/version: the committed version
)

// Entry is one request travelling through the pipeline (a ring slot).
type Entry struct {
	Kind      Kind
	Conn      *eventloop.Conn
	Seq       uint64 // the request's number on its connection
	KeepAlive bool
	HTTP10    bool   // the client speaks HTTP/1.0 (keep-alive must then be announced)
	RequestID []byte // copied out of the read buffer; nil if none
	Route     metrics.Route
	Start     time.Time // when the request was parsed (for the latency metric)

	// Set by the stages.
	Version int64
	Status  int
	Resp    []byte // the full HTTP response, built by persist

	// Payload is the parsed request of kinds added later (issue 8).
	Payload any
}

// Options configure the pipeline.
type Options struct {
	WaitStrategy        pipeline.WaitStrategy
	ReleaseThreads      int
	OkResolveIterations int
	LgSlotCount         int  // ring size 2^LgSlotCount; 0 means 16
	DirectWrites        bool // release threads may write to sockets themselves
	// SpinBeforePark is the pipeline's spin before a stage parks (see
	// pipeline.Options); 0: the pipeline's default, negative: park at once.
	SpinBeforePark time.Duration
	// StageCPUs pins thread t of stage s to StageCPUs[s][t % len]; an empty
	// list leaves that stage unpinned. A pinned stage cannot run on the
	// thread of the loop that pushed (so every hop to it is an OS context
	// switch): pinning is for dedicated cores with a spinning strategy.
	StageCPUs [][]int
	Metrics   *metrics.Metrics
}

// Pipeline runs the stage goroutines.
type Pipeline struct {
	opt       Options
	p         *pipeline.Pipeline[Entry]
	wg        sync.WaitGroup
	committed atomic.Int64
	pushMu    sync.Mutex
	stopped   bool
}

// okResponse is GET /ok's answer for the common case (keep-alive, no
// request id): built once and shared read-only by every connection.
var okBody = []byte(`{"status":"ok"}`)
var okResponse = http1.AppendResponse(nil, 200, "application/json", okBody, nil, true)

// BuildResponse is http1.AppendResponse, plus "Connection: keep-alive" for
// an HTTP/1.0 client that asked to keep the connection (HTTP/1.0 closes
// after a response unless told otherwise).
func BuildResponse(dst []byte, status int, contentType string, body, requestID []byte, keepAlive, http10 bool) []byte {
	start := len(dst)
	dst = http1.AppendResponse(dst, status, contentType, body, requestID, keepAlive)
	if keepAlive && http10 {
		if i := bytes.Index(dst[start:], []byte("\r\n")); i >= 0 {
			dst = slices.Insert(dst, start+i+2, []byte("Connection: keep-alive\r\n")...)
		}
	}
	return dst
}

// New starts the stage goroutines.
func New(opt Options) (*Pipeline, error) {
	if opt.ReleaseThreads < 1 {
		return nil, fmt.Errorf("commit: release threads must be >= 1, got %d", opt.ReleaseThreads)
	}
	if opt.LgSlotCount == 0 {
		opt.LgSlotCount = 16
	}
	if opt.Metrics == nil {
		opt.Metrics = metrics.New()
	}
	p, err := pipeline.NewWithOptions[Entry](opt.WaitStrategy, []int{1, 1, 1, opt.ReleaseThreads}, opt.LgSlotCount,
		pipeline.Options{SpinBeforePark: opt.SpinBeforePark})
	if err != nil {
		return nil, fmt.Errorf("commit pipeline: %w", err)
	}
	cp := &Pipeline{opt: opt, p: p}
	cp.wg.Add(3 + opt.ReleaseThreads)
	go cp.runStage(0, 0, cp.sequence)
	go cp.runStage(1, 0, cp.resolve)
	go cp.runStage(2, 0, cp.persist)
	for t := 0; t < opt.ReleaseThreads; t++ {
		s := eventloop.NewSender(opt.DirectWrites)
		go cp.runStage(3, t, func(b pipeline.StageBatch[Entry], thread int) int { return cp.release(b, thread, s) })
	}
	return cp, nil
}

// Submit hands the requests of one event-loop turn to the pipeline in one
// push (more only when they outnumber the ring's slots). Safe from several
// loops at once.
func (cp *Pipeline) Submit(entries []Entry) {
	for len(entries) > 0 {
		b := cp.p.Push(len(entries), true)
		n := b.Len()
		for i := 0; i < n; i++ {
			*b.At(i) = entries[i]
		}
		b.Release()
		cp.opt.Metrics.Push(n)
		entries = entries[n:]
	}
}

// Close pushes one shutdown entry per release thread (after every request
// already submitted) and waits for every stage goroutine to finish.
func (cp *Pipeline) Close() {
	cp.pushMu.Lock()
	if cp.stopped {
		cp.pushMu.Unlock()
		return
	}
	cp.stopped = true
	cp.pushMu.Unlock()
	stops := make([]Entry, cp.opt.ReleaseThreads)
	cp.Submit(stops)
	cp.wg.Wait()
}

// CommittedVersion is the latest committed version.
func (cp *Pipeline) CommittedVersion() int64 { return cp.committed.Load() }

// runStage drives one (stage, thread): acquire, process, release, until it
// saw the shutdown entries meant for it (every one for the first three
// stages, its own for a release thread).
func (cp *Pipeline) runStage(stage, thread int, process func(pipeline.StageBatch[Entry], int) int) {
	defer cp.wg.Done()
	if stage < len(cp.opt.StageCPUs) && len(cp.opt.StageCPUs[stage]) > 0 {
		cpus := cp.opt.StageCPUs[stage]
		if err := affinity.PinCurrentThread([]int{cpus[thread%len(cpus)]}); err != nil {
			fmt.Fprintf(os.Stderr, "weaseldb: commit stage %s thread %d: %v\n", metrics.StageNames[stage], thread, err)
		}
	}
	want := cp.opt.ReleaseThreads
	if stage == 3 {
		want = 1
	}
	for seen := 0; seen < want; {
		b := cp.p.Acquire(stage, thread, 0, true)
		start := time.Now()
		seen += process(b, thread)
		if stage != 3 || thread == 0 {
			cp.opt.Metrics.StageBatch(stage, b.Len(), time.Since(start))
		}
		b.Release()
	}
}

func (cp *Pipeline) owns(index uint64, thread int) bool {
	return int(index%uint64(cp.opt.ReleaseThreads)) == thread
}

// sequence assigns versions (issue 8) and reads the committed version for
// /v1/version.
func (cp *Pipeline) sequence(b pipeline.StageBatch[Entry], _ int) (shutdowns int) {
	for i := 0; i < b.Len(); i++ {
		e := b.At(i)
		switch e.Kind {
		case KindShutdown:
			shutdowns++
		case KindVersion:
			e.Version = cp.committed.Load()
		}
	}
	return shutdowns
}

func countShutdowns(b pipeline.StageBatch[Entry]) (n int) {
	for i := 0; i < b.Len(); i++ {
		if b.At(i).Kind == KindShutdown {
			n++
		}
	}
	return n
}

// resolve checks preconditions (issue 8); /ok spends its spin work here.
// It must never block.
func (cp *Pipeline) resolve(b pipeline.StageBatch[Entry], _ int) int {
	if cp.opt.OkResolveIterations <= 0 {
		return countShutdowns(b)
	}
	for i := 0; i < b.Len(); i++ {
		if b.At(i).Kind == KindOK {
			cpuwork.SpendCPUCycles(cp.opt.OkResolveIterations)
		}
	}
	return countShutdowns(b)
}

// persist builds each response.
func (cp *Pipeline) persist(b pipeline.StageBatch[Entry], _ int) (shutdowns int) {
	for i := 0; i < b.Len(); i++ {
		e := b.At(i)
		switch e.Kind {
		case KindShutdown:
			shutdowns++
		case KindOK:
			e.Status = 200
			if e.KeepAlive && e.RequestID == nil && !e.HTTP10 {
				e.Resp = okResponse
			} else {
				e.Resp = BuildResponse(nil, 200, "application/json", okBody, e.RequestID, e.KeepAlive, e.HTTP10)
			}
		case KindVersion:
			e.Status = 200
			body := strconv.AppendInt([]byte(`{"version":`), e.Version, 10)
			body = append(body, `,"leader":""}`...)
			e.Resp = BuildResponse(make([]byte, 0, 160+len(body)), 200, "application/json", body, e.RequestID, e.KeepAlive, e.HTTP10)
		}
	}
	return shutdowns
}

// release sends the responses of the entries this thread owns (Index %
// threads), grouped per connection by the Sender; a connection closed in
// the meantime drops them safely.
func (cp *Pipeline) release(b pipeline.StageBatch[Entry], thread int, s *eventloop.Sender) (shutdowns int) {
	now := time.Now()
	for i := 0; i < b.Len(); i++ {
		if !cp.owns(b.Index(i), thread) {
			continue
		}
		e := b.At(i)
		if e.Kind == KindShutdown {
			shutdowns++
			continue
		}
		cp.opt.Metrics.Request(e.Route, e.Status, now.Sub(e.Start))
		if e.Conn != nil { // nil only in tests
			s.Send(e.Conn, e.Seq, e.Resp, !e.KeepAlive)
		}
		// Drop the references the ring slot would keep alive. Kind stays:
		// it is the only field other release threads may read.
		e.Conn, e.RequestID, e.Resp, e.Payload = nil, nil, nil, nil
	}
	s.Flush()
	return shutdowns
}
