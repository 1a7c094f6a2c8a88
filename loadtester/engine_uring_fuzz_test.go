package loadtester

import (
	"bytes"
	"encoding/binary"
	"math"
	"runtime"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"weaseldb/internal/uring"
)

// newUringTestThread is a network thread on the io_uring engine, its ring
// enabled on the calling goroutine's thread (locked until the test ends),
// with one connection adopted and connected; nil where io_uring is
// unavailable.
func newUringTestThread(t *testing.T) (*netThread, *uringEngine, *conn) {
	t.Helper()
	if err := uring.Probe(); err != nil {
		t.Skip(err)
	}
	runtime.LockOSThread()
	t.Cleanup(runtime.UnlockOSThread)
	cfg := DefaultConfig()
	kinds, table, err := newKinds(&cfg, "run")
	if err != nil {
		t.Fatal(err)
	}
	r := &runner{cfg: cfg, tmpl: kinds[0].tmpl, kinds: kinds, table: table, base: time.Now(),
		connReqs: make(chan connRequest, 16), ioBackend: IOBackendIOUring}
	r.windowEnd.Store(math.MaxInt64)
	th, err := newNetThread(r, 0)
	if err != nil {
		t.Fatal(err)
	}
	r.threads = []*netThread{th}
	t.Cleanup(th.shutdown)
	e := th.eng.(*uringEngine)
	if err := e.start(); err != nil {
		t.Fatal(err)
	}
	mine, _ := socketPair(t)
	th.adopt(handoff{fd: mine})
	c := th.conns[0]
	e.complete(&uring.CQE{UserData: uringData(uopConnect, c.slot, c.gen), Res: int32(unix.POLLOUT)})
	if c.state != connActive || !c.recvOn {
		t.Fatalf("the connect's completion did not bring the connection up")
	}
	// What topUp wrote is the model's: start from nothing.
	c.out = c.out[:0]
	e.txList = e.txList[:0]
	c.onTxList = false
	return th, e, c
}

// FuzzUringCompletions drives the io_uring engine's completion handling
// with a fake completion source: receives filling buffers in any order
// with reads of any size between them, completions of closed connections'
// receives (their buffers must go back), receives ended for want of
// buffers or without IORING_CQE_F_MORE, the stream's end, and sends
// completing in parts. It checks that the bytes read are the bytes
// received, in order; that every buffer the kernel handed over is given
// back exactly once, and only after it was read whole; and that the bytes
// sent are the bytes written, in order, one send in flight at a time. A
// program whose first byte is odd runs the open loop's stamped receives
// (multishot recvmsg: a header, control data with or without a stamp,
// the payload; the stream's end an empty payload).
func FuzzUringCompletions(f *testing.F) {
	f.Add([]byte{0, 10, 0, 20, 2, 15, 3, 7, 4, 5, 3, 2, 9, 2, 40, 1, 6, 7, 0, 5})
	f.Add([]byte{3, 50, 4, 5, 1, 5, 30, 5, 30, 0, 64, 2, 255})
	f.Add([]byte{4, 40, 5, 0, 6, 2, 4, 7, 5, 0, 6, 1})                           // a partial send, its rest before the next write
	f.Add([]byte{1, 0, 0, 10, 1, 21, 3, 7, 4, 5, 5, 0, 6, 9, 3, 40, 7, 0, 3, 1}) // stamped receives, stamp or none, then the end
	f.Fuzz(func(t *testing.T, prog []byte) {
		if len(prog) > 400 {
			prog = prog[:400]
		}
		_, e, c := newUringTestThread(t)
		e.stamps = len(prog) > 0 && prog[0]%2 == 1
		var received, read, written, sent []byte
		var handedOut int
		given0 := e.bufs.Given()
		held := func() map[uint16]bool {
			m := map[uint16]bool{}
			for _, b := range c.rxq[c.rxHead:] {
				if m[b.id] {
					t.Fatalf("buffer %d queued twice", b.id)
				}
				m[b.id] = true
			}
			return m
		}
		next := byte(0)
		eof := false
		for i := 0; i+1 < len(prog) && c.state == connActive; i += 2 {
			op, arg := prog[i]%8, int(prog[i+1])
			switch op {
			case 0, 1: // a receive fills a buffer the kernel owns
				if eof {
					continue
				}
				h := held()
				var id uint16
				for id = 0; h[id]; id++ {
				}
				if int(id) >= uringBufs {
					e.complete(&uring.CQE{UserData: uringData(uopRecv, c.slot, c.gen), Res: -int32(unix.ENOBUFS)})
					continue
				}
				n := 1 + arg%64
				hdr := 0
				if e.stamps {
					hdr = recvmsgHeader(e.bufs.Buf(id, recvmsgHead), n, arg%2 == 0)
				}
				buf := e.bufs.Buf(id, hdr+n)[hdr:]
				for k := range buf {
					buf[k] = next
					next++
				}
				received = append(received, buf...)
				handedOut++
				flags := uint32(id)<<16 | uring.CQEFBuffer
				if op == 0 {
					flags |= uring.CQEFMore
				}
				e.complete(&uring.CQE{UserData: uringData(uopRecv, c.slot, c.gen), Res: int32(hdr + n), Flags: flags})
			case 2: // a closed connection's receive hands a buffer back
				h := held()
				var id uint16
				for id = 0; h[id]; id++ {
				}
				if int(id) >= uringBufs {
					continue
				}
				handedOut++ // and given back at once
				e.complete(&uring.CQE{UserData: uringData(uopRecv, c.slot, c.gen+1), Res: int32(1 + arg%8),
					Flags: uint32(id)<<16 | uring.CQEFBuffer | uring.CQEFMore})
			case 3: // the loop reads
				p := make([]byte, 1+arg)
				n, _, errno := e.read(c, p)
				switch {
				case errno == unix.EAGAIN:
					if len(read) != len(received) {
						t.Fatalf("EAGAIN with %d bytes unread", len(received)-len(read))
					}
				case errno != 0:
					t.Fatalf("read: %v", errno)
				case n == 0 && !eof:
					t.Fatalf("end of stream before the peer's")
				}
				read = append(read, p[:n]...)
			case 4: // the loop writes
				w := bytes.Repeat([]byte{byte(arg)}, 1+arg%32)
				written = append(written, w...)
				e.write(c, w)
			case 5: // the turn's sends go out
				e.flushSends()
			case 6: // a send completes, maybe in part
				if !c.sending {
					e.complete(&uring.CQE{UserData: uringData(uopSend, c.slot, c.gen), Res: int32(arg)}) // no send: ignored
					continue
				}
				rest := c.sendBuf[c.sendOff:]
				n := min(len(rest), 1+arg%(len(rest)+1))
				sent = append(sent, rest[:n]...)
				e.complete(&uring.CQE{UserData: uringData(uopSend, c.slot, c.gen), Res: int32(n)})
			case 7: // the peer ends its side
				if arg%4 != 0 {
					continue
				}
				eof = true
				if !e.stamps {
					e.complete(&uring.CQE{UserData: uringData(uopRecv, c.slot, c.gen), Res: 0})
					continue
				}
				h := held() // a recvmsg's end: a buffer with an empty payload
				var id uint16
				for id = 0; h[id]; id++ {
				}
				if int(id) >= uringBufs {
					continue
				}
				handedOut++ // and given back at once
				hdr := recvmsgHeader(e.bufs.Buf(id, recvmsgHead), 0, false)
				e.complete(&uring.CQE{UserData: uringData(uopRecv, c.slot, c.gen), Res: int32(hdr), Flags: uint32(id)<<16 | uring.CQEFBuffer})
			}
			if e.awaiting < 0 || e.awaiting > 1 {
				t.Fatalf("%d connections awaiting a response, of 1", e.awaiting)
			}
			e.rxList = e.rxList[:0] // the loop's onReadable is not the subject here
			c.onRxList = false
			if !bytes.Equal(read, received[:len(read)]) {
				t.Fatalf("read bytes differ from those received")
			}
			if back := e.bufs.Given() - given0; back != handedOut-len(held()) {
				t.Fatalf("%d buffers given back, want %d (%d handed over, %d held)", back, handedOut-len(held()), handedOut, len(held()))
			}
		}
		if c.state != connActive {
			return
		}
		owed := append([]byte{}, sent...)
		if c.sending {
			owed = append(owed, c.sendBuf[c.sendOff:]...)
		}
		owed = append(owed, c.out...)
		if !bytes.Equal(owed, written) {
			t.Fatalf("sent + in flight + queued (%d bytes) differ from written (%d)", len(owed), len(written))
		}
	})
}

// recvmsgHead is a stamped receive's bytes before its payload: the
// io_uring_recvmsg_out header and the control data asked for.
const recvmsgHead = 16 + uringCtrlLen

// recvmsgHeader writes a multishot recvmsg's header and control data (an
// SCM_TIMESTAMPNS stamp, or none) into buf, for a payload of n bytes, and
// returns their length.
func recvmsgHeader(buf []byte, n int, stamped bool) int {
	clear(buf)
	ctrl := 0
	if stamped {
		ctrl = unix.CmsgSpace(int(unsafe.Sizeof(unix.Timespec{})))
		h := (*unix.Cmsghdr)(unsafe.Pointer(&buf[16]))
		h.Level, h.Type = unix.SOL_SOCKET, unix.SCM_TIMESTAMPNS
		h.SetLen(unix.CmsgLen(int(unsafe.Sizeof(unix.Timespec{}))))
		*(*unix.Timespec)(unsafe.Pointer(&buf[16+unix.CmsgLen(0)])) = unix.NsecToTimespec(time.Now().UnixNano())
	}
	binary.NativeEndian.PutUint32(buf[4:], uint32(ctrl))
	binary.NativeEndian.PutUint32(buf[8:], uint32(n))
	return recvmsgHead
}
