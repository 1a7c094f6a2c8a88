//go:build (amd64 || arm64) && !purego

package cpuwork

// spinLoop decrements n to zero, one iteration per decrement (spin_$GOARCH.s).
//
//go:noescape
func spinLoop(n int)
