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
// the result), netloop.go (a network thread's loop: the hot path), books.go
// (its warm-up and measured counters), openloop.go (the open-loop pacer),
// rxstamp.go (responses stamped by the kernel, read on the pacer's wakes),
// window.go and tailaccount.go (the window's close and what never
// finished), connect.go (connect threads), request.go and response.go (the
// bytes on the wire), tlsconn.go (https: the handshake on the connect
// threads, TLS on the loop), h2conn.go (HTTP/2 frames and streams),
// threshold.go (--threshold), workload.go and kinds.go (request kinds), steps.go and
// search.go (rate steps and the knee), result.go, verdict.go, hdrlog.go,
// vegeta.go and merge.go (results).
package loadtester
