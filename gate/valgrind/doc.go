// Package valgrind is what the cost tier needs of valgrind on this machine:
// the environment a Go program gets under it, fitted to what its decoder
// can execute here (Probe, Env); one line for why it stopped a program
// (ExplainLog, Cause); callgrind_control's zero and dump (Control); and the
// system calls it traced (TracedSyscalls). It starts no server (package
// gate does) and reads no callgrind dump (gate/callgrind does).
package valgrind
