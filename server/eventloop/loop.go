package eventloop

import (
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"weaseldb/server/affinity"
)

// Handler is the protocol on top of the loop. Every method runs on the
// connection's loop goroutine.
type Handler interface {
	// OnOpen is called once per accepted connection before any data.
	OnOpen(c *Conn)
	// OnData gets all unconsumed input and returns how many bytes it
	// consumed; the rest is offered again with more input. It stops early
	// (returning what it consumed) when c.Overloaded().
	OnData(c *Conn, in []byte) int
	// OnTurnEnd is called once per loop turn, after the events of one
	// epoll_wait and the ready list were served: the place to hand the
	// turn's requests to the pipeline in one push.
	OnTurnEnd(l *Loop)
	// OnClose is called once after the descriptor is closed.
	OnClose(c *Conn)
}

// DrainHandler is implemented by a Handler that streams (GET /v1/subscribe):
// OnDrained runs on the loop when a connection with NotifyDrained set has
// written everything it owed after a short write (EPOLLOUT fired), so the
// handler can give it more. It must not write to c itself (Stream from
// OnTurnEnd instead): flush calls it.
type DrainHandler interface {
	OnDrained(c *Conn)
}

// StopHandler is implemented by a Handler that wants to speak last at
// shutdown: OnStop runs on the loop when it begins to stop, before its
// connections start draining, so streams can end with a final line.
type StopHandler interface {
	OnStop(l *Loop)
}

// Options tune the loops. Zero fields take the defaults of DefaultOptions.
type Options struct {
	EventBatchSize int           // events per epoll_wait
	ReadBufferSize int           // bytes per read call
	ReadBudget     int           // bytes read from one connection per turn before others get a go
	AcceptBatch    int           // accepts per listener event before others get a go
	HighWater      int           // owed bytes above which a connection is not read
	MaxInflight    int           // unanswered requests above which a connection is not read
	Linger         time.Duration // after SHUT_WR, how long to wait for the peer's FIN
	AcceptBackoff  time.Duration // pause after EMFILE/ENFILE
	DirectWrites   bool          // Senders may write to the socket themselves
	IOCPUs         []int         // pin loop i to IOCPUs[i % len]; empty: no pinning
}

// DefaultOptions are the defaults for unset Options fields.
func DefaultOptions() Options {
	return Options{
		EventBatchSize: 64,
		ReadBufferSize: 16 << 10,
		ReadBudget:     256 << 10,
		AcceptBatch:    64,
		HighWater:      1 << 20,
		MaxInflight:    1024,
		Linger:         2 * time.Second,
		AcceptBackoff:  100 * time.Millisecond,
		DirectWrites:   true,
	}
}

func (o *Options) fill() {
	d := DefaultOptions()
	if o.EventBatchSize <= 0 {
		o.EventBatchSize = d.EventBatchSize
	}
	if o.ReadBufferSize <= 0 {
		o.ReadBufferSize = d.ReadBufferSize
	}
	if o.ReadBudget <= 0 {
		o.ReadBudget = d.ReadBudget
	}
	if o.AcceptBatch <= 0 {
		o.AcceptBatch = d.AcceptBatch
	}
	if o.HighWater <= 0 {
		o.HighWater = d.HighWater
	}
	if o.MaxInflight <= 0 {
		o.MaxInflight = d.MaxInflight
	}
	if o.Linger <= 0 {
		o.Linger = d.Linger
	}
	if o.AcceptBackoff <= 0 {
		o.AcceptBackoff = d.AcceptBackoff
	}
}

var genCounter atomic.Uint32

func nextGen() uint32 {
	for {
		if g := genCounter.Add(1); g != 0 {
			return g
		}
	}
}

// Loop is one epoll instance and the goroutine that waits on it.
type Loop struct {
	id        int
	epfd      int
	wakeFd    int
	h         Handler
	opt       Options
	listeners []*Listener
	lnActive  []bool  // registered in this loop's epoll set
	lnResume  []int64 // monotonic ns when a paused listener is re-added

	// Loop goroutine only.
	conns           []*Conn // by descriptor number
	nconns          int
	ready           []*Conn
	lingering       []*Conn
	events          []unix.EpollEvent
	scratch         []byte
	iov             []unix.Iovec
	stopSeen        bool
	acceptErrLogged bool
	deadline        int64 // shutdown: force-close after this (monotonic ns); 0: none
	timerAt         int64 // the handler's SetTimer (monotonic ns); 0: none
	drainH          DrainHandler

	wakePending atomic.Int32
	postMu      sync.Mutex
	posts       []*Conn
	postsSpare  []*Conn
	stopReq     atomic.Bool
	stopBy      atomic.Int64

	// Counters for tests and metrics.
	Accepted     atomic.Int64
	StaleEvents  atomic.Int64
	AcceptPauses atomic.Int64
	Wakeups      atomic.Int64

	done chan struct{}
	err  error
}

// ID is the loop's index.
func (l *Loop) ID() int { return l.id }

// Conns is the number of open connections (loop goroutine only).
func (l *Loop) Conns() int { return l.nconns }

func newLoop(id int, listeners []*Listener, h Handler, opt Options) (*Loop, error) {
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("epoll_create1: %w", err)
	}
	wfd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		unix.Close(epfd)
		return nil, fmt.Errorf("eventfd: %w", err)
	}
	l := &Loop{
		id: id, epfd: epfd, wakeFd: wfd, h: h, opt: opt,
		listeners: listeners,
		lnActive:  make([]bool, len(listeners)),
		lnResume:  make([]int64, len(listeners)),
		events:    make([]unix.EpollEvent, opt.EventBatchSize),
		scratch:   make([]byte, opt.ReadBufferSize),
		iov:       make([]unix.Iovec, 0, maxIovecs),
		done:      make(chan struct{}),
	}
	l.drainH, _ = h.(DrainHandler)
	if err := l.ctl(unix.EPOLL_CTL_ADD, wfd, unix.EPOLLIN|unix.EPOLLET, 0); err != nil {
		l.closeFds()
		return nil, fmt.Errorf("register eventfd: %w", err)
	}
	for i := range listeners {
		if err := l.addListener(i); err != nil {
			l.closeFds()
			return nil, err
		}
	}
	return l, nil
}

func (l *Loop) closeFds() {
	unix.Close(l.wakeFd)
	unix.Close(l.epfd)
}

// ctl is epoll_ctl with (fd, generation) in the data word.
func (l *Loop) ctl(op, fd int, events uint32, gen uint32) error {
	ev := unix.EpollEvent{Events: events, Fd: int32(fd), Pad: int32(gen)}
	for {
		err := unix.EpollCtl(l.epfd, op, fd, &ev)
		if err != unix.EINTR {
			return err
		}
	}
}

// addListener registers listener i. EPOLLEXCLUSIVE wakes one (or a few)
// loops per connection instead of all; it is ADD-only, so pausing a
// listener is DEL and resuming is ADD. Level-triggered, so a capped accept
// burst is reported again on the next wait.
func (l *Loop) addListener(i int) error {
	if err := l.ctl(unix.EPOLL_CTL_ADD, l.listeners[i].fd, unix.EPOLLIN|unix.EPOLLEXCLUSIVE, 0); err != nil {
		return fmt.Errorf("register listener %s: %w", l.listeners[i].addr, err)
	}
	l.lnActive[i] = true
	return nil
}

func (l *Loop) removeListener(i int) {
	if l.lnActive[i] {
		l.ctl(unix.EPOLL_CTL_DEL, l.listeners[i].fd, 0, 0)
		l.lnActive[i] = false
	}
}

// connMask derives the interest mask from the connection's state, the only
// place that does (so a MOD never forgets ET or RDHUP).
func connMask(outArmed bool) uint32 {
	m := uint32(unix.EPOLLIN | unix.EPOLLRDHUP | unix.EPOLLET)
	if outArmed {
		m |= unix.EPOLLOUT
	}
	return m
}

func (l *Loop) setOutArmed(c *Conn, armed bool) {
	if c.outArmed == armed {
		return
	}
	c.outArmed = armed
	if err := l.ctl(unix.EPOLL_CTL_MOD, c.fd, connMask(armed), c.gen); err != nil {
		l.closeConn(c)
	}
}

// post asks the loop to look at c (flush, resume reading, finish). Any
// goroutine. Only the caller that flips wakePending from 0 to 1 writes the
// eventfd; the loop clears the flag before it drains the queue, so a post
// that lands after the drain always wakes it again.
func (l *Loop) post(c *Conn) {
	l.postMu.Lock()
	l.posts = append(l.posts, c)
	l.postMu.Unlock()
	l.wake()
}

// Wake makes the loop run a turn (and so OnTurnEnd) soon. Any goroutine;
// cheap when a wake is already pending.
func (l *Loop) Wake() { l.wake() }

// SetTimer makes the loop run a turn at or soon after at (loop goroutine
// only; it replaces the previous timer; the zero time clears it). The
// handler re-arms it from OnTurnEnd: a loop without a timer sleeps until an
// event, so a handler with nothing due costs no wake-ups.
func (l *Loop) SetTimer(at time.Time) {
	if at.IsZero() {
		l.timerAt = 0
		return
	}
	l.timerAt = max(1, int64(at.Sub(monoBase)))
}

func (l *Loop) wake() {
	if l.wakePending.CompareAndSwap(0, 1) {
		var one = [8]byte{1}
		for {
			_, err := unix.Write(l.wakeFd, one[:])
			if err != unix.EINTR {
				return // EAGAIN: the counter is saturated, so a wake is pending anyway
			}
		}
	}
}

func (l *Loop) drainPosts() {
	l.wakePending.Store(0)
	l.postMu.Lock()
	batch := l.posts
	l.posts = l.postsSpare[:0]
	l.postMu.Unlock()
	for i, c := range batch {
		batch[i] = nil
		l.service(c)
	}
	l.postsSpare = batch[:0]
}

// service handles a post about c: flush what it owes, resume reading when
// the client caught up, and finish a draining connection.
func (l *Loop) service(c *Conn) {
	c.mu.Lock()
	c.postPending = false
	closed := c.closed
	c.mu.Unlock()
	if closed {
		return
	}
	l.flush(c)
	l.afterProgress(c)
}

// afterProgress resumes reading or finishes the connection once enough
// output drained.
func (l *Loop) afterProgress(c *Conn) {
	if c.isGone() {
		return
	}
	if c.readPaused && c.belowLowWater() {
		c.readPaused = false
		c.pausedFlag.Store(false)
		l.addReady(c)
	}
	if c.draining {
		l.maybeFinish(c)
	}
}

func (l *Loop) addReady(c *Conn) {
	if !c.onReady {
		c.onReady = true
		l.ready = append(l.ready, c)
	}
}

// run is the loop goroutine.
func (l *Loop) run(report func(error)) {
	defer close(l.done)
	defer func() {
		if r := recover(); r != nil {
			l.err = fmt.Errorf("event loop %d panicked: %v\n%s", l.id, r, debug.Stack())
			l.abort()
			if report != nil {
				report(l.err)
			}
		}
	}()
	if len(l.opt.IOCPUs) > 0 {
		// Locked and never unlocked: the pinned thread ends with the goroutine.
		cpu := l.opt.IOCPUs[l.id%len(l.opt.IOCPUs)]
		if err := affinity.PinCurrentThread([]int{cpu}); err != nil && report != nil {
			report(fmt.Errorf("event loop %d: %w", l.id, err))
		}
	}
	for {
		n, err := unix.EpollWait(l.epfd, l.events, l.waitTimeout())
		if err != nil {
			if err == unix.EINTR {
				continue // the Go runtime's preemption signals: routine
			}
			panic(fmt.Sprintf("epoll_wait: %v", err))
		}
		for i := 0; i < n; i++ {
			l.dispatch(l.events[i])
			if i&63 == 63 && l.wakePending.Load() != 0 {
				l.drainPosts() // completions do not wait behind a big batch
			}
		}
		l.serveReady()
		if l.wakePending.Load() != 0 {
			l.drainPosts()
		}
		if l.timerAt != 0 && monoNow() >= l.timerAt {
			l.timerAt = 0 // fired: the handler re-arms it if it still needs one
		}
		l.h.OnTurnEnd(l)
		l.runTimers()
		if l.stopReq.Load() && !l.stopSeen {
			l.beginStop()
		}
		if l.stopSeen && l.nconns == 0 {
			l.abort()
			return
		}
	}
}

func monoNow() int64 { return int64(time.Since(monoBase)) }

var monoBase = time.Now()

// waitTimeout is -1 (sleep until an event) unless work is queued or a
// deadline (linger, accept back-off, shutdown) is due: no periodic wake-ups.
func (l *Loop) waitTimeout() int {
	if len(l.ready) > 0 || l.wakePending.Load() != 0 {
		return 0
	}
	next := int64(-1)
	consider := func(t int64) {
		if t > 0 && (next < 0 || t < next) {
			next = t
		}
	}
	for _, c := range l.lingering {
		consider(c.lingerUntil)
	}
	for i, t := range l.lnResume {
		if !l.lnActive[i] && !l.stopSeen {
			consider(t)
		}
	}
	if l.stopSeen {
		consider(l.deadline)
	}
	consider(l.timerAt)
	if next < 0 {
		return -1
	}
	ms := (next-monoNow())/int64(time.Millisecond) + 1
	if ms < 0 {
		ms = 0
	}
	return int(min(ms, 1<<30))
}

func (l *Loop) runTimers() {
	if len(l.lingering) == 0 && !l.anyListenerPaused() && !l.stopSeen {
		return
	}
	now := monoNow()
	kept := l.lingering[:0]
	for _, c := range l.lingering {
		if c.isGone() {
			continue
		}
		if now >= c.lingerUntil {
			l.closeConn(c)
			continue
		}
		kept = append(kept, c)
	}
	clear(l.lingering[len(kept):])
	l.lingering = kept
	if !l.stopSeen {
		for i, t := range l.lnResume {
			if !l.lnActive[i] && t > 0 && now >= t {
				l.lnResume[i] = 0
				if err := l.addListener(i); err != nil {
					l.lnResume[i] = now + int64(l.opt.AcceptBackoff)
				}
			}
		}
	}
	if l.stopSeen && l.deadline > 0 && now >= l.deadline {
		for _, c := range l.conns {
			if c != nil {
				l.closeConn(c)
			}
		}
	}
}

func (l *Loop) anyListenerPaused() bool {
	for i := range l.lnActive {
		if !l.lnActive[i] {
			return true
		}
	}
	return false
}

// isGone tells the loop that c was closed (loop goroutine only).
func (c *Conn) isGone() bool { return c.loop.conns[c.fd] != c }

// dispatch applies one event. The data word holds (fd, generation): an
// event whose generation does not match the connection now at that number
// is stale (the descriptor was closed and reused within one batch) and is
// dropped.
func (l *Loop) dispatch(ev unix.EpollEvent) {
	fd, gen := int(ev.Fd), uint32(ev.Pad)
	if gen == 0 {
		if fd == l.wakeFd {
			l.Wakeups.Add(1)
			var buf [8]byte
			unix.Read(l.wakeFd, buf[:])
			l.drainPosts()
			return
		}
		for i, ln := range l.listeners {
			if ln.fd == fd && l.lnActive[i] {
				l.acceptFrom(i)
			}
		}
		return
	}
	if fd < 0 || fd >= len(l.conns) || l.conns[fd] == nil || l.conns[fd].gen != gen {
		l.StaleEvents.Add(1)
		return
	}
	c := l.conns[fd]
	if ev.Events&(unix.EPOLLOUT|unix.EPOLLERR|unix.EPOLLHUP) != 0 && c.outArmed {
		l.flush(c)
		if c.isGone() {
			return
		}
		l.afterProgress(c)
	}
	if ev.Events&(unix.EPOLLIN|unix.EPOLLRDHUP|unix.EPOLLHUP|unix.EPOLLERR) != 0 {
		if ev.Events&(unix.EPOLLRDHUP|unix.EPOLLHUP|unix.EPOLLERR) != 0 {
			c.rdhup = true
		}
		l.readConn(c)
	}
}

func (l *Loop) acceptFrom(i int) {
	ln := l.listeners[i]
	for n := 0; n < l.opt.AcceptBatch; n++ {
		fd, _, err := unix.Accept4(ln.fd, unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC)
		if err != nil {
			switch err {
			case unix.EINTR, unix.ECONNABORTED, unix.EPROTO:
				continue
			case unix.EAGAIN:
				return // normal with EPOLLEXCLUSIVE: another loop took it
			case unix.EMFILE, unix.ENFILE, unix.ENOBUFS, unix.ENOMEM:
				// Out of descriptors: the backlog stays readable, so a
				// level-triggered listener would spin. Leave the epoll set
				// and come back after a timed back-off.
				l.removeListener(i)
				l.lnResume[i] = monoNow() + int64(l.opt.AcceptBackoff)
				l.AcceptPauses.Add(1)
				if !l.acceptErrLogged {
					l.acceptErrLogged = true // once per streak, not every back-off
					fmt.Fprintf(os.Stderr, "weaseldb: loop %d: accept on %s: %v; pausing accepts for %v at a time\n", l.id, ln.addr, err, l.opt.AcceptBackoff)
				}
				return
			default:
				fmt.Fprintf(os.Stderr, "weaseldb: loop %d: accept on %s: %v\n", l.id, ln.addr, err)
				return
			}
		}
		l.Accepted.Add(1)
		l.acceptErrLogged = false
		if !ln.unix {
			unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
		}
		l.register(fd, ln.unix)
	}
}

// register publishes the connection in the table first and then adds it
// to epoll, so the readiness that ADD reports (once, edge-triggered) finds
// the connection.
func (l *Loop) register(fd int, isUnix bool) *Conn {
	c := &Conn{loop: l, fd: fd, gen: nextGen(), isUnix: isUnix}
	for fd >= len(l.conns) {
		l.conns = append(l.conns, make([]*Conn, max(64, len(l.conns)))...)
	}
	l.conns[fd] = c
	l.nconns++
	l.h.OnOpen(c)
	if err := l.ctl(unix.EPOLL_CTL_ADD, fd, connMask(false), c.gen); err != nil {
		l.closeConn(c)
		return nil
	}
	if l.stopSeen {
		l.beginDrain(c)
	}
	return c
}

// serveReady gives connections that used up their read budget another turn.
func (l *Loop) serveReady() {
	if len(l.ready) == 0 {
		return
	}
	batch := l.ready
	l.ready = nil
	for i, c := range batch {
		batch[i] = nil
		c.onReady = false
		if !c.isGone() {
			l.readConn(c)
		}
	}
	if l.ready == nil {
		l.ready = batch[:0]
	}
}

// readConn reads until EAGAIN (edge-triggered), at most ReadBudget bytes
// this turn; a connection with more is put on the ready list.
func (l *Loop) readConn(c *Conn) {
	if c.lingering {
		l.discardInput(c)
		return
	}
	if c.draining || c.readPaused {
		return
	}
	if len(c.in) > 0 && !c.inputStopped && !c.Overloaded() {
		l.consume(c, nil) // left over from a pause
	}
	budget := l.opt.ReadBudget
	for !c.isGone() {
		if c.Overloaded() {
			l.pause(c)
			break
		}
		n, err := unix.Read(c.fd, l.scratch)
		if err != nil {
			if err == unix.EINTR {
				continue
			}
			if err == unix.EAGAIN {
				break
			}
			l.closeConn(c) // ECONNRESET and friends: nothing more can be delivered
			return
		}
		if n == 0 {
			c.eof = true
			l.beginDrain(c)
			break
		}
		if !c.inputStopped {
			l.consume(c, l.scratch[:n])
		}
		budget -= n
		// A short read emptied the socket: later data raises a new edge.
		// Unless the FIN was reported, which only a read returning 0 shows.
		if n < len(l.scratch) && !c.rdhup {
			break
		}
		if budget <= 0 {
			l.addReady(c)
			break
		}
	}
	if c.stalled && !c.isGone() && !c.readPaused && !c.draining {
		// The handler stopped parsing because of back-pressure: input may
		// sit in c.in with no edge to come, so wait for the resume post.
		l.pause(c)
	}
	c.stalled = false
	if c.needFlush && !c.isGone() {
		c.needFlush = false
		l.flush(c)
		if !c.isGone() {
			l.afterProgress(c)
		}
	}
	if c.inputStopped && !c.draining && !c.isGone() {
		l.beginDrain(c)
	}
}

// consume hands input to the handler without copying when nothing is
// buffered; the unconsumed rest is kept.
func (l *Loop) consume(c *Conn, data []byte) {
	defer func() { c.stalled = c.stalled || c.Overloaded() }()
	if len(c.in) == 0 && data != nil {
		k := l.h.OnData(c, data)
		if k < len(data) && !c.inputStopped {
			c.in = append(c.in, data[k:]...)
		}
		return
	}
	c.in = append(c.in, data...)
	k := l.h.OnData(c, c.in)
	if c.inputStopped {
		return
	}
	rest := copy(c.in, c.in[k:])
	c.in = c.in[:rest]
	if rest == 0 && cap(c.in) > spareLimit {
		c.in = nil
	}
}

func (l *Loop) pause(c *Conn) {
	c.readPaused = true
	c.pausedFlag.Store(true)
	// Senders decrement the counters and then read pausedFlag; the loop
	// stores pausedFlag and then reads the counters: one of them sees the
	// other, so a resume is never lost.
	if c.belowLowWater() {
		c.readPaused = false
		c.pausedFlag.Store(false)
		l.addReady(c)
	}
}

// flush writes what c owes from the loop; on EAGAIN it arms EPOLLOUT, and
// it disarms it once nothing is owed.
func (l *Loop) flush(c *Conn) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	done, err := true, error(nil)
	if c.outBytes > 0 {
		done, err = c.writeLocked(&l.iov)
	}
	if err != nil {
		c.mu.Unlock()
		l.closeConn(c)
		return
	}
	c.flushScheduled = !done
	c.mu.Unlock()
	wasArmed := c.outArmed
	l.setOutArmed(c, !done)
	if done && wasArmed && c.NotifyDrained && l.drainH != nil && !c.isGone() {
		l.drainH.OnDrained(c)
	}
}

// beginDrain stops reading requests; the connection closes once every
// parsed request is answered and written.
func (l *Loop) beginDrain(c *Conn) {
	if c.draining {
		return
	}
	c.draining = true
	c.inputStopped = true
	c.in = nil
	if c.readPaused {
		c.readPaused = false
		c.pausedFlag.Store(false)
	}
	l.maybeFinish(c)
}

// maybeFinish closes a draining connection that owes nothing: at once if
// the peer already shut its side, otherwise with SHUT_WR and a bounded
// linger that reads and discards until the peer's FIN (closing with unread
// input would send RST and could destroy responses the peer has not read).
func (l *Loop) maybeFinish(c *Conn) {
	if c.lingering || c.isGone() {
		return
	}
	c.mu.Lock()
	c.finishOnIdle = true
	idle := c.outBytes == 0 && (c.inflight.Load() == 0 || c.closeQueued)
	c.mu.Unlock()
	if !idle {
		return
	}
	if c.eof {
		l.closeConn(c)
		return
	}
	unix.Shutdown(c.fd, unix.SHUT_WR)
	c.lingering = true
	linger := l.opt.Linger
	if l.stopSeen {
		linger = min(linger, 500*time.Millisecond)
	}
	c.lingerUntil = monoNow() + int64(linger)
	l.lingering = append(l.lingering, c)
	l.discardInput(c)
}

func (l *Loop) discardInput(c *Conn) {
	for !c.isGone() {
		n, err := unix.Read(c.fd, l.scratch)
		if err == unix.EINTR {
			continue
		}
		if err == unix.EAGAIN {
			return
		}
		if err != nil || n == 0 {
			l.closeConn(c)
			return
		}
	}
}

// closeConn is the only place a connection's descriptor is closed: on its
// loop, under mu (so no Sender is writing to it), EPOLL_CTL_DEL first
// (epoll follows open file descriptions, not numbers).
func (l *Loop) closeConn(c *Conn) {
	if c.isGone() {
		return
	}
	c.mu.Lock()
	c.closed = true
	c.dropOutputLocked()
	l.ctl(unix.EPOLL_CTL_DEL, c.fd, 0, 0)
	unix.Close(c.fd)
	c.mu.Unlock()
	l.conns[c.fd] = nil
	l.nconns--
	c.in = nil
	c.pausedFlag.Store(false)
	l.h.OnClose(c)
}

// beginStop: stop accepting, then drain every connection.
func (l *Loop) beginStop() {
	l.stopSeen = true
	l.deadline = l.stopBy.Load()
	for i := range l.listeners {
		l.removeListener(i)
	}
	if sh, ok := l.h.(StopHandler); ok {
		sh.OnStop(l)
	}
	for _, c := range l.conns {
		if c != nil {
			// Requests already read but not yet parsed are parsed now.
			if len(c.in) > 0 && !c.inputStopped {
				l.consume(c, nil)
				if c.needFlush {
					c.needFlush = false
					l.flush(c)
				}
			}
			if !c.isGone() {
				l.beginDrain(c)
			}
		}
	}
	l.h.OnTurnEnd(l)
}

// abort closes everything this loop owns (after a stop, or a panic).
func (l *Loop) abort() {
	defer func() { recover() }() // a second panic must not escape the loop goroutine
	for _, c := range l.conns {
		if c != nil {
			l.closeConn(c)
		}
	}
	for i := range l.listeners {
		l.removeListener(i)
	}
	// The eventfd stays open: a Sender may still post to this loop; the
	// Server closes it once nothing can (see Server.Close).
	unix.Close(l.epfd)
}

// ErrStopped is returned by Wait when the loop stopped because of a panic.
var ErrStopped = errors.New("event loop stopped")
