package pipeline

import _ "unsafe" // for go:linkname

// runtimeCanSpin is the Go runtime's own test for whether a brief spin can
// pay off (the one sync.Mutex uses): it says no when this P's run queue holds
// a goroutine (quite likely the one we wait for, readied onto our P) or when
// no other P is running anything (so nobody can publish while we spin). The
// runtime keeps this linkname for outside packages (go.dev/issue/67401). We
// call it with i = 0 so only those two conditions count; the time budget is
// ours.
//
//go:linkname runtimeCanSpin sync.runtime_canSpin
func runtimeCanSpin(i int) bool
