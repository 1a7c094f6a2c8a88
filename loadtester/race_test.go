//go:build race

package loadtester

const raceEnabled = true
