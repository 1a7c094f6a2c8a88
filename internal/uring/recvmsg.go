package uring

import (
	"encoding/binary"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Multishot recvmsg: a receive that carries the socket's control data
// (a receive stamp) beside the payload, in the provided buffer it fills.

// PrepRecvMsgMultishot is PrepRecvMultishot with recvmsg's control data:
// each completion's buffer holds a RecvmsgOut header, msg.Namelen bytes
// of address, msg.Controllen bytes of control messages (a receive stamp,
// with SO_TIMESTAMPNS) and the payload (ParseRecvmsg). The kernel reads
// msg's lengths when the SQE is submitted.
func (s *SQE) PrepRecvMsgMultishot(fd int, msg *unix.Msghdr, bgid uint16, userData uint64) {
	s.Opcode, s.Fd, s.UserData = opRecvmsg, int32(fd), userData
	s.Addr = uint64(uintptr(unsafe.Pointer(msg)))
	s.Len = 1
	s.Ioprio = recvMultishot
	s.Flags = sqeBufferSelect
	s.BufIndex = bgid
}

// recvmsgOutSize is sizeof(struct io_uring_recvmsg_out).
const recvmsgOutSize = 16

// ParseRecvmsg splits a multishot recvmsg's buffer (the completion's Res
// bytes) into its control data and payload, given the name and control
// lengths the request asked for; ok is false for a buffer too short to
// hold what its header says.
func ParseRecvmsg(buf []byte, nameLen, ctrlLen int) (control, payload []byte, ok bool) {
	if len(buf) < recvmsgOutSize {
		return nil, nil, false
	}
	ctrlGot := int(binary.NativeEndian.Uint32(buf[4:]))
	payloadLen := int(binary.NativeEndian.Uint32(buf[8:]))
	start := recvmsgOutSize + nameLen
	end := start + ctrlLen
	if ctrlGot > ctrlLen || end > len(buf) || payloadLen > len(buf)-end {
		return nil, nil, false
	}
	return buf[start : start+ctrlGot], buf[end : end+payloadLen], true
}
