package uring

import (
	"fmt"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// BufRing is a provided-buffer ring (IORING_REGISTER_PBUF_RING): count
// buffers of size bytes each that the kernel picks from for receives of
// group bgid, handing each back through a completion (CQE.BufferID), after
// which the owner reads it and gives it back with Recycle. Ring and
// buffers are mapped outside the Go heap. Owner: the ring's goroutine.
type BufRing struct {
	ring     *Ring
	bgid     uint16
	count    uint16 // a power of two
	size     int
	entries  []bufEntry // aliases mem; entries[0].resv is the ring's tail
	bufs     []byte     // count*size bytes, buffer i at i*size
	mem      []byte
	bufMem   []byte
	tail     uint16 // entries added, not yet published
	mask     uint16
	tailAddr *uint16
	given    int // buffers added in all (Given)
}

// bufEntry is struct io_uring_buf.
type bufEntry struct {
	addr uint64
	len  uint32
	bid  uint16
	resv uint16
}

type bufReg struct {
	ringAddr    uint64
	ringEntries uint32
	bgid        uint16
	flags       uint16
	resv        [3]uint64
}

// RegisterBufRing registers count (a power of two, at most 32768) buffers
// of size bytes as group bgid, all of them given to the kernel.
func (r *Ring) RegisterBufRing(bgid uint16, count int, size int) (*BufRing, error) {
	if count <= 0 || count > 1<<15 || count&(count-1) != 0 || size <= 0 {
		return nil, fmt.Errorf("buffer ring: count %d must be a power of two up to 32768, size %d positive", count, size)
	}
	ringBytes := count * int(unsafe.Sizeof(bufEntry{}))
	mem, err := unix.Mmap(-1, 0, ringBytes, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANONYMOUS|unix.MAP_PRIVATE|unix.MAP_POPULATE)
	if err != nil {
		return nil, fmt.Errorf("buffer ring: mmap: %w", err)
	}
	bufMem, err := unix.Mmap(-1, 0, count*size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANONYMOUS|unix.MAP_PRIVATE|unix.MAP_POPULATE)
	if err != nil {
		unix.Munmap(mem)
		return nil, fmt.Errorf("buffer ring: mmap: %w", err)
	}
	reg := bufReg{ringAddr: uint64(uintptr(unsafe.Pointer(&mem[0]))), ringEntries: uint32(count), bgid: bgid}
	_, _, errno := unix.Syscall6(unix.SYS_IO_URING_REGISTER, uintptr(r.fd), registerPbufRing, uintptr(unsafe.Pointer(&reg)), 1, 0, 0)
	if errno != 0 {
		unix.Munmap(mem)
		unix.Munmap(bufMem)
		return nil, fmt.Errorf("%w: register buffer ring: %w", ErrUnsupported, errno)
	}
	b := &BufRing{ring: r, bgid: bgid, count: uint16(count), size: size, mem: mem, bufMem: bufMem, bufs: bufMem,
		mask: uint16(count - 1)}
	b.entries = unsafe.Slice((*bufEntry)(unsafe.Pointer(&mem[0])), count)
	b.tailAddr = &b.entries[0].resv
	for i := 0; i < count; i++ {
		b.add(uint16(i))
	}
	b.publish()
	return b, nil
}

// Group is the buffer group id receives name.
func (b *BufRing) Group() uint16 { return b.bgid }

// Buf is buffer id's first n bytes (n from the completion's Res). It stays
// the caller's until Recycle(id).
func (b *BufRing) Buf(id uint16, n int) []byte {
	off := int(id) * b.size
	return b.bufs[off : off+n : off+b.size]
}

// Recycle gives buffer id back to the kernel (published at the next
// Publish, or at once when publish is true).
func (b *BufRing) Recycle(id uint16, publish bool) {
	b.add(id)
	if publish {
		b.publish()
	}
}

// Publish makes the recycled buffers visible to the kernel.
func (b *BufRing) Publish() { b.publish() }

// Given is how many buffers were given to the kernel in all: count at
// registration, one more each Recycle. Given() - count is how many came
// back and were recycled; a test checks each returned buffer is recycled
// once.
func (b *BufRing) Given() int { return b.given }

func (b *BufRing) add(id uint16) {
	b.given++
	e := &b.entries[b.tail&b.mask]
	e.addr = uint64(uintptr(unsafe.Pointer(&b.bufs[int(id)*b.size])))
	e.len = uint32(b.size)
	e.bid = id
	b.tail++
}

// publish stores the tail with release semantics (a 16-bit field the
// kernel reads; the 32-bit word holding it is written atomically, keeping
// the other half, entries[0].bid, as it is).
func (b *BufRing) publish() {
	word := (*uint32)(unsafe.Pointer(uintptr(unsafe.Pointer(b.tailAddr)) - 2))
	for {
		old := atomic.LoadUint32(word)
		nw := old&0x0000ffff | uint32(b.tail)<<16
		if atomic.CompareAndSwapUint32(word, old, nw) {
			return
		}
	}
}

// Close unregisters the group and unmaps its memory. Receives that still
// use the group must have ended (cancelled) first.
func (b *BufRing) Close() error {
	reg := bufReg{bgid: b.bgid}
	_, _, errno := unix.Syscall6(unix.SYS_IO_URING_REGISTER, uintptr(b.ring.fd), unregisterPbufRing, uintptr(unsafe.Pointer(&reg)), 1, 0, 0)
	unix.Munmap(b.mem)
	unix.Munmap(b.bufMem)
	if errno != 0 {
		return fmt.Errorf("unregister buffer ring: %w", errno)
	}
	return nil
}
