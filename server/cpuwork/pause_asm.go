//go:build (amd64 || arm64) && !purego

package cpuwork

// pause runs one PAUSE (amd64) or YIELD (arm64) instruction (pause_$GOARCH.s).
//
//go:noescape
func pause()
