//go:build race

package store

// raceEnabled: the race detector slows the big memory tests several times
// over, and they check nothing about goroutines.
const raceEnabled = true
