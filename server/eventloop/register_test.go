package eventloop

// register admits and registers a descriptor that did not come from accept
// (a socketpair end), whatever the limit. Test-only: the server has no
// in-process connections, every one it serves comes through accept
// (accept.go), so this lives beside the tests that use it.
func (l *Loop) register(fd int, isUnix bool) *Conn {
	l.open.Add(1)
	return l.registerAdmitted(fd, isUnix)
}
