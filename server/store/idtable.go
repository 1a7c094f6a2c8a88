package store

import (
	"hash/maphash"
	"math/bits"
	"unsafe"
)

// Owner: an idIndex belongs to the requestIDs that holds it, so to the
// sequence stage goroutine; no method is goroutine-safe. idSeeds is
// written once, at package initialization, and only read after.

// idKey is what the store remembers of a request id instead of its text:
// a 128-bit keyed hash, two 64-bit maphash values under independent random
// per-process seeds. Two different ids get the same key with probability
// 2^-128 (the seeds are unknown to clients, so they cannot aim for it);
// among 1e8 ids held at once, the chance that any two share a key is about
// (1e8)²/2 × 2^-128 ≈ 1.5e-23. Such a collision would make the later id
// look like the earlier one: a duplicate answered with the earlier
// commit's outcome, or a banned id. The text itself (36 bytes for a UUID
// and a 16-byte string header) would cost more than the whole record.
type idKey struct{ h1, h2 uint64 }

var idSeeds = [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}

func hashID(id string) idKey {
	return idKey{maphash.String(idSeeds[0], id), maphash.String(idSeeds[1], id)}
}

// idEntry is one remembered id's state: a commit's assigned version, or
// for a ban (v < 0, v = ^version) the last version sequenced when status
// answered not_found; at is when (storeClock).
type idEntry struct {
	v  int64
	at int64
}

func (e idEntry) banned() bool { return e.v < 0 }

func (e idEntry) version() int64 {
	if e.v < 0 {
		return ^e.v
	}
	return e.v
}

// idRecord is one id in the FIFO: 32 bytes, two to a cache line. Records
// are kept whole (not as separate arrays of h1, h2, v and at) because a
// lookup reads h1 and h2 together at a random place: one cache miss
// instead of two. at stays in nanoseconds: a 4-byte clock would leave the
// record padded to 32 bytes anyway, and nanoseconds keep every retention
// boundary (policies are in seconds, tests step in minutes) exact.
type idRecord struct {
	key idKey
	idEntry
}

// Ring chunks: the FIFO grows and shrinks a chunk at a time, so it holds
// at most one partly used chunk per end (no doubling slack), and growing
// never copies the records already held.
const (
	chunkBits = 12 // 4096 records, 128 KiB
	chunkLen  = 1 << chunkBits
	chunkMask = chunkLen - 1
)

type idChunk [chunkLen]idRecord

const (
	minSlots = 16
	// maxSpan is the most seq-base a slot holds (slot values 1..2^32-1),
	// so also the most records an idIndex holds at once.
	maxSpan = 1<<32 - 2
)

// idIndex is a FIFO of idRecords, each with a sequence number (seq, in
// push order, never reused), and a table that finds a record by key.
//
// The table is hand-written open addressing instead of a Go map: a
// map[idKey]uint32 from key to seq holds a copy of each key (the records
// already have them) and measured 56 bytes per entry at a million, which
// with the records would be about twice the 40 bytes per id of this one.
// Each slot is 4 bytes: 0 when empty, else 1 + (seq - base) of the record
// it points to. Linear probing from home(key); deletion shifts the rest of
// the cluster back, so there are no tombstones; the table doubles when
// more than 3/4 full and never shrinks (like a Go map).
//
// base moves forward (rebase, a rebuild at the same size) when a new seq
// would be more than span above it, about once per 4 billion pushes.
type idIndex struct {
	chunks     deque[*idChunk] // chunks.at(0) holds seqs from head &^ chunkMask
	spare      *idChunk        // the last chunk emptied, reused by the next push
	head, tail uint64          // the records held are seqs head..tail-1

	slots []uint32
	shift uint // home(k) = k.h1 >> shift: the top bits pick the slot
	base  uint64
	span  uint64 // maxSpan; tests lower it to force rebases
}

func (x *idIndex) len() int { return int(x.tail - x.head) }

// bytes is the memory the index holds: its chunks (the spare one
// included) and its table. O(1), so cheap enough to publish per batch.
func (x *idIndex) bytes() int64 {
	chunks := int64(x.chunks.len())
	if x.spare != nil {
		chunks++
	}
	return chunks*int64(unsafe.Sizeof(idChunk{})) + int64(len(x.slots))*int64(unsafe.Sizeof(uint32(0)))
}

// maxLen is the most records the index can hold (see maxSpan).
func (x *idIndex) maxLen() int {
	return int(min(x.spanLimit(), uint64(^uint(0)>>1)))
}

func (x *idIndex) spanLimit() uint64 {
	if x.span == 0 {
		return maxSpan
	}
	return x.span
}

// rec is the record of seq, which must be held.
func (x *idIndex) rec(seq uint64) *idRecord {
	i := seq - x.head&^chunkMask
	return &(*x.chunks.at(int(i >> chunkBits)))[i&chunkMask]
}

// front is the oldest record's seq and the record; the index is not empty.
func (x *idIndex) front() (uint64, *idRecord) { return x.head, x.rec(x.head) }

func (x *idIndex) home(k idKey) int { return int(k.h1 >> x.shift) }

func (x *idIndex) seqOf(slot uint32) uint64 { return x.base + uint64(slot) - 1 }

// find returns the seq of the record with key k.
func (x *idIndex) find(k idKey) (uint64, bool) {
	if len(x.slots) == 0 {
		return 0, false
	}
	mask := len(x.slots) - 1
	for i := x.home(k); ; i = (i + 1) & mask {
		s := x.slots[i]
		if s == 0 {
			return 0, false
		}
		if seq := x.seqOf(s); x.rec(seq).key == k {
			return seq, true
		}
	}
}

// push appends r at the back; its key must not be held already.
func (x *idIndex) push(r idRecord) {
	seq := x.pushRecord(r)
	size := len(x.slots)
	if 4*x.len() > 3*size {
		x.rebuild(max(2*size, minSlots))
		return
	}
	if seq-x.base > x.spanLimit() {
		x.rebuild(size)
		return
	}
	x.insert(seq)
}

// popFront removes the oldest record and returns it; the index is not
// empty.
func (x *idIndex) popFront() idRecord {
	r := *x.rec(x.head)
	x.remove(x.slotOf(x.head, r.key))
	x.popRecord()
	return r
}

// requeueFront moves the oldest record to the back with the state e: its
// key stays in its slot, which now points to the new seq.
func (x *idIndex) requeueFront(e idEntry) {
	r := *x.rec(x.head)
	slot := x.slotOf(x.head, r.key)
	x.popRecord()
	r.idEntry = e
	seq := x.pushRecord(r)
	if seq-x.base > x.spanLimit() {
		x.rebuild(len(x.slots))
		return
	}
	x.slots[slot] = uint32(seq - x.base + 1)
}

func (x *idIndex) pushRecord(r idRecord) uint64 {
	if x.tail&chunkMask == 0 {
		c := x.spare
		if c == nil {
			c = new(idChunk)
		}
		x.spare = nil
		x.chunks.push(c)
	}
	seq := x.tail
	x.tail++
	*x.rec(seq) = r
	return seq
}

func (x *idIndex) popRecord() {
	x.head++
	if x.head&chunkMask == 0 {
		x.spare = x.chunks.popFront()
	}
}

// slotOf is the slot that points to seq, whose key is k.
func (x *idIndex) slotOf(seq uint64, k idKey) int {
	want := uint32(seq - x.base + 1)
	mask := len(x.slots) - 1
	i := x.home(k)
	for x.slots[i] != want {
		i = (i + 1) & mask
	}
	return i
}

// insert points the first empty slot from seq's home to seq.
func (x *idIndex) insert(seq uint64) {
	mask := len(x.slots) - 1
	i := x.home(x.rec(seq).key)
	for x.slots[i] != 0 {
		i = (i + 1) & mask
	}
	x.slots[i] = uint32(seq - x.base + 1)
}

// remove empties slot i, then shifts back each following entry of the
// cluster that may move into the hole (its home is not after the hole),
// so every entry stays reachable from its home without tombstones.
func (x *idIndex) remove(i int) {
	mask := len(x.slots) - 1
	for j := (i + 1) & mask; x.slots[j] != 0; j = (j + 1) & mask {
		h := x.home(x.rec(x.seqOf(x.slots[j])).key)
		// The entry at j may fill the hole at i when its probe distance
		// from home reaches back at least to i.
		if (j-h)&mask >= (j-i)&mask {
			x.slots[i] = x.slots[j]
			i = j
		}
	}
	x.slots[i] = 0
}

// rebuild makes a table of size slots (a power of two) with base at head
// and points it to every record held.
func (x *idIndex) rebuild(size int) {
	x.slots = make([]uint32, size)
	x.shift = uint(64 - bits.TrailingZeros(uint(size)))
	x.base = x.head
	for seq := x.head; seq < x.tail; seq++ {
		x.insert(seq)
	}
}
