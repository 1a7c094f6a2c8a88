// Package loadtester is an HTTP/1.1 and HTTP/2 load generator engine,
// plaintext or TLS, the library
// behind cmd/load_tester (which holds the flags, the signals and the exit
// statuses). Connect threads open connections and hand them to network
// threads, each running its own epoll loop; latencies go to per-thread
// HdrHistograms merged every stats interval. It runs closed loop (a fixed
// number of requests in flight per connection) or open loop (Config.Rate,
// latency from each request's intended send time), and accounts for every
// request due in the measured window (docs/load_tester.md). Beyond one
// load: a weighted mix of request kinds (Workload, counted per kind),
// open-loop steps at several rates (StepRunner, RunSteps) and the search
// for the highest rate meeting a latency objective (FindRate, a pure
// function over a step-running probe; FindRateSteps).
//
// Run(ctx, cfg) returns a *Result. Writers beside it put a result in files:
// WriteJSON (the versioned JSON the report and the gate read, ReadResult
// reads it back), WriteVegeta (vegeta's encoding) and HDRLog / WriteHDRLog
// (the HdrHistogram interval log). Merge adds the results of several
// instances exactly.
//
// Where things are: run.go (Run and the runner), collector.go (intervals and
// the result), thread.go (a network thread and who owns what), loop.go (its
// loop: the hot path), conn.go and connlife.go (a connection and its life),
// protocol.go (the seam a connection's transport and protocol sit behind:
// http1.go, h2conn.go, tlsconn.go, socket.go; their requests from
// requests.go), mode.go (the load modes: mode_closed.go, mode_ramp.go,
// mode_open.go with openloop.go's pacer), rxstamp.go (responses stamped by
// the kernel, read on the pacer's wakes), record.go and counts.go (booking
// and the counts), window.go and unfinished.go (the window's close and what
// never finished), stages.go (per stage), connect.go (connect threads),
// request.go and response.go (the bytes on the wire), threshold.go
// (--threshold), workload.go and kinds.go (request kinds), steps.go and
// search.go (rate steps and the knee), result.go, verdict.go, hdrlog.go,
// vegeta.go and merge.go (results).
//
// House words: a thread's "books" are its counts (counts.go: the books
// type, the warm-up's and the measured window's phaseStats, per kind and
// per stage groupBooks), kept by the loop and taken by the collector;
// to "book" a response or a failure is to count it there (record.go). A
// thread's "tail" is what its window left unfinished (requests in flight,
// or due and never sent) once it closed, which the collector counts and
// bounds (unfinished.go).
package loadtester
