package loadtester

import (
	"golang.org/x/sys/unix"

	"weaseldb/internal/uring"
)

// The io_uring engine's registered files (engine_uring.go has the rest):
// each connection's socket sits in the ring's own file table at its
// connection slot for as long as it is open, and its SQEs name the slot
// (uring.SQEFixedFile), so the kernel takes no reference on the file and
// does no descriptor lookup per send, receive or poll: the process's
// descriptor table is shared by the runtime's threads, which makes each
// of those an atomic operation on the file. The ring's descriptor is
// registered with the loop's thread too, for the same saving on each
// io_uring_enter.
//
// Where the kernel refuses a table (too old, RLIMIT_NOFILE too low) or a
// slot lies past it (the table is sized once, at --concurrency), the
// connection's SQEs name its descriptor instead: uringConn.file and
// fileFlags hold whichever it is, chosen once when it is adopted, so the
// send and receive paths never test which.
//
// A slot is emptied before its descriptor is closed: the table holds its
// own reference, so the socket would stay open (no FIN, no reset) until
// the slot is reused. Requests still in flight keep the file they started
// with, and a completion of theirs is told from the slot's next
// connection's by the generation in its user data, as before.
//
// Who owns what: the loop's alone, like the rest of the engine; the
// registrations are made on the loop's locked thread, the ring's single
// issuer (the kernel refuses them from another).

// maxFileTable caps the registered file table (a slot costs the kernel a
// pointer and a bit): connections past it use their descriptors.
const maxFileTable = 1 << 16

// registerFiles gives the ring a file table with a slot per connection
// the thread may hold and registers the ring's descriptor with the loop's
// thread; either one refused leaves the engine on descriptors.
func (e *uringEngine) registerFiles() {
	n := uint32(min(max(e.t.r.cfg.Concurrency, 1), maxFileTable))
	var lim unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_NOFILE, &lim) == nil && lim.Cur < uint64(n) {
		n = uint32(lim.Cur) // the kernel refuses a table larger than this (EMFILE)
	}
	if n > 0 && e.ring.RegisterFilesSparse(n) == nil {
		e.files = n
	}
	e.ring.RegisterRingFd() // refused: each enter names the descriptor
}

// adoptFile puts c's socket in its slot of the file table, or leaves its
// SQEs naming its descriptor where there is no slot for it.
func (e *uringEngine) adoptFile(c *conn) {
	c.file, c.fileFlags = int32(c.fd), 0
	if uint32(c.slot) < e.files && e.ring.UpdateFile(uint32(c.slot), c.fd) == nil {
		c.file, c.fileFlags = c.slot, uring.SQEFixedFile
	}
}

// dropFile empties c's slot, before its descriptor is closed.
func (e *uringEngine) dropFile(c *conn) {
	if c.fileFlags&uring.SQEFixedFile != 0 {
		e.ring.UpdateFile(uint32(c.slot), -1) // refused: the ring's close releases it
		c.fileFlags = 0
	}
}
