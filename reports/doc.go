// Package reports loads, checks and renders a run directory. LoadRun reads
// the artifacts one benchmark run left there (JSON results and HdrHistogram
// interval logs; their schemas are package artifacts'); CheckRun holds the
// run to its plan (`report check`, checks.json; the plans are package
// plan's); Render writes the markdown threading performance report with
// PNG plots, or the functional check of a run on virtual CPUs. It reads
// nothing else: every number it prints comes from a file of the run, and
// the report's Sources table says which file and which field. It runs,
// samples and probes nothing: package bench does, and the two import
// neither each other nor each other's packages.
package reports
