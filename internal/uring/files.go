package uring

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Registered (fixed) files and a registered ring descriptor: ways to skip
// the kernel's descriptor lookup per operation. A Go process's descriptor
// table is shared by its threads, so each request on a plain descriptor
// costs a reference taken and dropped on the file (atomic operations on a
// shared cache line) besides the table lookup; a request with
// SQEFixedFile names an index in the ring's own file table instead, which
// holds its reference for as long as the slot is set. The same goes for
// io_uring_enter on the ring's own descriptor (RegisterRingFd).
//
// These registrations are raw system calls: none of them blocks, and a
// loop locked to its thread that makes them (one per connection it
// adopts or closes) keeps its P through them, as through its raw
// io_uring_enter (SetRawEnter). Through the scheduler's system-call
// bookkeeping, a thread descheduled inside the call on a busy machine
// could find its P given away on return and wait for one while its
// connections and schedule wait too.

// SQEFixedFile (IOSQE_FIXED_FILE): the SQE's Fd is an index in the ring's
// registered file table (RegisterFilesSparse, UpdateFile), not a
// descriptor. Or it into an SQE's Flags after its Prep call.
const SQEFixedFile = 1 << 0

const (
	registerFilesUpdate = 6
	registerFiles2      = 13
	registerRingFds     = 20
	unregisterRingFds   = 21

	rsrcRegisterSparse = 1 << 0
	enterRegisteredRng = 1 << 4
)

// rsrcRegister is struct io_uring_rsrc_register.
type rsrcRegister struct {
	nr    uint32
	flags uint32
	resv2 uint64
	data  uint64
	tags  uint64
}

// filesUpdate is struct io_uring_files_update.
type filesUpdate struct {
	offset uint32
	resv   uint32
	fds    uint64
}

// rsrcUpdate is struct io_uring_rsrc_update (the ring-fd registration).
type rsrcUpdate struct {
	offset uint32
	resv   uint32
	data   uint64
}

// RegisterFilesSparse gives the ring a file table of n empty slots
// (IORING_REGISTER_FILES2 with IORING_RSRC_REGISTER_SPARSE, Linux 5.19),
// which UpdateFile fills and clears. The kernel refuses n above the
// process's RLIMIT_NOFILE (EMFILE). With SetupSingleIssuer, call it from
// the submitting thread once the ring is enabled.
func (r *Ring) RegisterFilesSparse(n uint32) error {
	reg := rsrcRegister{nr: n, flags: rsrcRegisterSparse}
	_, _, errno := unix.RawSyscall6(unix.SYS_IO_URING_REGISTER, uintptr(r.fd), registerFiles2,
		uintptr(unsafe.Pointer(&reg)), unsafe.Sizeof(reg), 0, 0)
	if errno != 0 {
		return fmt.Errorf("register a file table of %d slots: %w", n, errno)
	}
	return nil
}

// UpdateFile puts descriptor fd in slot index of the registered file table
// (fd -1 empties it). The table holds its own reference to the file: a
// slot must be emptied (or set to another descriptor) for the file to be
// released once its descriptor is closed. Requests in flight keep the file
// they started with; those submitted after the update see the new one.
func (r *Ring) UpdateFile(index uint32, fd int) error {
	fds := [1]int32{int32(fd)}
	up := filesUpdate{offset: index, fds: uint64(uintptr(unsafe.Pointer(&fds[0])))}
	n, _, errno := unix.RawSyscall6(unix.SYS_IO_URING_REGISTER, uintptr(r.fd), registerFilesUpdate,
		uintptr(unsafe.Pointer(&up)), 1, 0, 0)
	if errno != 0 {
		return fmt.Errorf("set file slot %d to descriptor %d: %w", index, fd, errno)
	}
	if n != 1 {
		return fmt.Errorf("set file slot %d to descriptor %d: the kernel updated %d slots", index, fd, n)
	}
	return nil
}

// RegisterRingFd registers the ring's descriptor with the calling thread
// (IORING_REGISTER_RING_FDS, Linux 5.18), so every later io_uring_enter
// from this thread names the registration and skips the descriptor
// lookup. Only the registering thread may enter the ring afterwards (the
// registration is that thread's): call it on the ring's single issuer,
// locked to its OS thread, and Close from that thread too (Close drops the
// registration, which otherwise keeps the ring alive as long as the
// thread).
func (r *Ring) RegisterRingFd() error {
	up := rsrcUpdate{offset: ^uint32(0), data: uint64(r.fd)} // offset -1: any free registration
	n, _, errno := unix.RawSyscall6(unix.SYS_IO_URING_REGISTER, uintptr(r.fd), registerRingFds,
		uintptr(unsafe.Pointer(&up)), 1, 0, 0)
	if errno != 0 {
		return fmt.Errorf("register the ring's descriptor: %w", errno)
	}
	if n != 1 {
		return fmt.Errorf("register the ring's descriptor: the kernel registered %d", n)
	}
	r.enterFd, r.enterFlags = int(up.offset), enterRegisteredRng
	return nil
}

// unregisterRingFd drops RegisterRingFd's registration (if any); from the
// registering thread.
func (r *Ring) unregisterRingFd() error {
	if r.enterFlags&enterRegisteredRng == 0 {
		return nil
	}
	up := rsrcUpdate{offset: uint32(r.enterFd)}
	r.enterFd, r.enterFlags = r.fd, 0
	_, _, errno := unix.RawSyscall6(unix.SYS_IO_URING_REGISTER, uintptr(r.fd), unregisterRingFds,
		uintptr(unsafe.Pointer(&up)), 1, 0, 0)
	if errno != 0 {
		return fmt.Errorf("unregister the ring's descriptor: %w", errno)
	}
	return nil
}
