//go:build (!amd64 && !arm64) || purego

package cpuwork

// pause has no portable spin-wait hint to give; the poll itself is the wait.
func pause() {}
