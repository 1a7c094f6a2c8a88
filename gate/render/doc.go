// Package render writes a gate result for its readers: the table cmd/gate
// prints (table.go), the markdown summary for a pull request (markdown.go),
// the cost tier's part of both (cost.go) and the JSON (json.go). It reads
// gate/result alone and formats what the engine measured; the engine
// (package gate) never imports it, as benchstat's tables are apart from
// the benchmarks they read.
package render
