// A connection's output queue: the first response of an empty queue and
// large ones queued by reference (the connection owns what it is given),
// small ones behind them coalesced into one tail buffer, all written with
// write or writev (at most IOV_MAX iovecs). Hand-written hot path: an
// unpipelined response is written from its own bytes with no copy and no
// allocation, and an idle connection holds no output buffer. Every function
// here runs under Conn.mu, by the loop or by a Sender.

package eventloop

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

const (
	// maxIovecs is the kernel's IOV_MAX: one writev never takes more.
	maxIovecs = 1024
	// coalesceLimit: responses up to this size are copied into the
	// connection's tail buffer so that pipelined responses leave in one
	// contiguous write; larger ones are queued by reference.
	coalesceLimit = 16 << 10
	// spareLimit: an output buffer up to this size is kept for reuse after
	// it drains; a larger one is dropped so idle connections stay small.
	spareLimit = 64 << 10
)

func (c *Conn) appendOutLocked(data []byte) {
	if len(data) == 0 {
		return
	}
	c.outBytes += len(data)
	c.owed.Store(int64(c.outBytes))
	if len(c.chunks) == 0 {
		c.chunks = append(c.chunkSlots[:0], data)
		c.tailOpen = false
		return
	}
	if len(data) > coalesceLimit {
		c.chunks = append(c.chunks, data)
		c.tailOpen = false
		return
	}
	if c.tailOpen {
		last := len(c.chunks) - 1
		if t := c.chunks[last]; cap(t)-len(t) >= len(data) {
			c.chunks[last] = append(t, data...)
			return
		}
	}
	var buf []byte
	if cap(c.spare) >= len(data) {
		buf, c.spare = c.spare[:0], nil
	} else {
		buf = make([]byte, 0, max(4096, 2*len(data)))
	}
	c.chunks = append(c.chunks, append(buf, data...))
	c.tailOpen = true
}

// writeLocked writes queued output until done or EAGAIN. Hand-written hot
// path: one write for one chunk, writev (at most 1024 iovecs) otherwise.
func (c *Conn) writeLocked(iov *[]unix.Iovec) (done bool, err error) {
	for c.outBytes > 0 {
		var n int
		if len(c.chunks) == 1 {
			n, err = unix.Write(c.fd, c.chunks[0][c.off:])
		} else {
			v := c.iovecsLocked(*iov)
			*iov = v
			n, err = writev(c.fd, v)
			clear(v)
		}
		switch err {
		case nil:
			c.consumeLocked(n)
		case unix.EINTR:
			continue
		case unix.EAGAIN:
			return false, nil
		default:
			return false, err
		}
	}
	return true, nil
}

// iovecsLocked builds the iovec list of the queued output in v's storage:
// chunks[0][off:] first, at most maxIovecs entries. The one place the list
// is built, for writev here and for a backend's asynchronous send alike.
func (c *Conn) iovecsLocked(v []unix.Iovec) []unix.Iovec {
	v = v[:0]
	for i, ch := range c.chunks {
		if i == maxIovecs {
			break
		}
		if i == 0 {
			ch = ch[c.off:]
		}
		var one unix.Iovec
		one.Base = &ch[0]
		one.SetLen(len(ch))
		v = append(v, one)
	}
	return v
}

func writev(fd int, iov []unix.Iovec) (int, error) {
	n, _, e := unix.Syscall(unix.SYS_WRITEV, uintptr(fd), uintptr(unsafe.Pointer(&iov[0])), uintptr(len(iov)))
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}

func (c *Conn) consumeLocked(n int) {
	c.outBytes -= n
	c.owed.Store(int64(c.outBytes))
	for n > 0 {
		rest := len(c.chunks[0]) - c.off
		if n < rest {
			c.off += n
			return
		}
		n -= rest
		if len(c.chunks) == 1 && c.tailOpen && cap(c.chunks[0]) <= spareLimit {
			c.spare = c.chunks[0][:0]
		}
		c.chunks[0] = nil
		c.chunks = c.chunks[1:]
		c.off = 0
	}
	if len(c.chunks) == 0 {
		// Back to the inline slots (cleared: a queue that outgrew them left
		// references there), so the next response allocates nothing.
		c.chunkSlots = [len(c.chunkSlots)][]byte{}
		c.chunks = c.chunkSlots[:0]
		c.tailOpen = false
	}
}

// dropOutputLocked forgets everything owed (the connection is closing).
func (c *Conn) dropOutputLocked() {
	c.chunks, c.early, c.spare, c.interim = nil, nil, nil, nil
	c.chunkSlots = [len(c.chunkSlots)][]byte{}
	c.off, c.outBytes, c.tailOpen = 0, 0, false
	c.owed.Store(0)
}
