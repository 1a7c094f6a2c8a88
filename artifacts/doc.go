// Package artifacts holds the schemas of the files a benchmark run leaves in
// its run directory, each with its file name and version: the manifest, the
// report's setups and their server samples, the wait-strategy comparison,
// the threads read back from the kernel (Threads, with the pins planned), the functional checks,
// and bench_pipeline's and bench_cpu_work's results. The writers (package
// bench, cmd/bench_pipeline, `report check`) and the reader (package
// reports, whose LoadRun reads a run directory) share these definitions, so
// a schema change breaks their build instead of their parsing.
// load_tester's result is result.Result, with its reader
// result.ReadResult.
//
// The package only describes: it reads, writes, samples and plans nothing.
package artifacts
