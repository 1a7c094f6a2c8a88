package app

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"weaseldb/server/api"
	"weaseldb/server/eventloop"
	"weaseldb/server/http1"
	"weaseldb/server/store"
)

// GET /v1/subscribe streams on the subscriber's own event loop. The commit
// path only appends to the shared log and, once per persist batch that
// appended, wakes the loops that have subscribers (at most io_threads
// eventfd writes, whatever the number of subscribers). Each loop then hands
// every subscriber whose connection has drained the lines after its cursor,
// as chunks; a subscriber that has not drained keeps its backlog in the
// shared log (where it is measured, not copied).
//
// The slow-consumer rule measures what the client has not taken over time,
// not one entry's size: "untaken" is the log bytes after the subscriber's
// cursor plus the bytes its connection still owes. Above
// max_buffer_size_bytes the subscriber has slow_consumer_grace_seconds to
// come back under; if it does not, the stream ends with a final
// {"error":"slow_consumer",...} line after the chunks already queued (so
// on a chunk boundary). A commit bigger than the buffer, or a burst, thus
// reaches a consumer that reads steadily. Keep-alive lines and grace
// deadlines come from one timer per loop, armed only while the loop streams.
//
// Ownership: every subscriber and the subscribers list belong to their
// loop's goroutine, except inbox (release threads append under inboxMu)
// and the wake/has flags (atomics, read by the persist stage).

const (
	// streamChunkBytes is how many bytes of lines go in one chunk.
	streamChunkBytes = 64 << 10
	// streamTurnBudget bounds what one subscriber gets per loop turn, so a
	// subscriber catching up does not starve the loop's other connections.
	streamTurnBudget = 256 << 10
	// DefaultSubscriberEndGrace is how long a stream that ended (slow
	// consumer, shutdown) may take to deliver its final line before the
	// connection is closed anyway.
	DefaultSubscriberEndGrace = 5 * time.Second
)

// subscriber is one stream, owned by its connection's loop.
type subscriber struct {
	c        *eventloop.Conn
	sub      *store.Subscription
	held     []byte    // a chunk the connection could not take yet (an earlier response is missing)
	lastLine time.Time // when the stream last sent a line (the keep-alive clock)
	// overSince: since when the subscriber has held more than
	// max_buffer_size_bytes untaken (zero while within it).
	overSince time.Time
	endBy     time.Time // ended: close the connection by then; zero while streaming
	gone      bool      // the connection closed
}

// subscribers is one loop's streams.
type subscribers struct {
	list    []*subscriber // loop goroutine only
	drained bool          // loop only: a stream's output drained since the last serve
	serving bool          // loop only: list is being walked (closes only mark)
	timer   time.Time     // loop only: the next keep-alive or end deadline
	scratch []byte        // loop only: lines read from the log

	wake    atomic.Bool // a publish or a new subscriber: serve on the next turn
	has     atomic.Bool // list is not empty (read by the persist stage)
	inboxMu sync.Mutex
	inbox   []*subscriber // started by release threads, not yet adopted
}

// active is the loop's per-turn check: one length test and one atomic load.
func (s *subscribers) active() bool { return len(s.list) > 0 || s.wake.Load() }

// register takes a subscription whose response head is queued on c (a
// release thread calls it) and wakes c's loop to stream it.
func (h *handler) register(c *eventloop.Conn, sub *store.Subscription) {
	s := &h.subs
	s.inboxMu.Lock()
	s.inbox = append(s.inbox, &subscriber{c: c, sub: sub})
	s.inboxMu.Unlock()
	s.wake.Store(true)
	h.loop.Wake()
}

// notifyPublish wakes the loop if it streams (persist stage, per batch).
func (h *handler) notifyPublish() {
	s := &h.subs
	if s.has.Load() && !s.wake.Load() && s.wake.CompareAndSwap(false, true) {
		h.loop.Wake()
	}
}

// OnDrained: a stream's connection wrote everything it owed; the loop
// serves its subscribers at the end of this turn.
func (h *handler) OnDrained(*eventloop.Conn) { h.subs.drained = true }

// OnStop ends every stream with a shutdown line, after what it can still
// take, before the loop drains its connections.
func (h *handler) OnStop(*eventloop.Loop) {
	s := &h.subs
	now := time.Now()
	s.serving = true
	h.adopt(now)
	for _, sb := range s.list {
		if sb.gone || !sb.endBy.IsZero() || sb.c.Closing() {
			continue
		}
		h.serveOne(sb, now)
		if sb.endBy.IsZero() && !sb.c.Closing() {
			h.endStream(sb, api.SubscribeErrShutdown, "server shutting down", now)
		}
	}
	s.serving = false
	s.compact()
	h.armTimer(now)
}

func (h *handler) serveSubscribers() {
	s := &h.subs
	now := time.Now()
	woken := s.wake.Load() && s.wake.Swap(false)
	if !woken && !s.drained && now.Before(s.timer) {
		return
	}
	s.drained = false
	s.serving = true
	h.adopt(now)
	for _, sb := range s.list {
		if !sb.gone {
			h.serveOne(sb, now)
		}
	}
	s.serving = false
	s.compact()
	h.armTimer(now)
}

// adopt moves the subscriptions started by release threads to the list.
func (h *handler) adopt(now time.Time) {
	s := &h.subs
	s.inboxMu.Lock()
	in := s.inbox
	s.inbox = nil
	s.inboxMu.Unlock()
	for _, sb := range in {
		st, ok := sb.c.Ctx.(*connState)
		if !ok || sb.c.Closing() {
			continue // closed before its stream began: the cursor is just dropped
		}
		st.sub = sb
		sb.c.NotifyDrained = true
		sb.lastLine = now
		s.list = append(s.list, sb)
	}
	s.has.Store(len(s.list) > 0)
}

// closed forgets the stream of a connection that closed.
func (s *subscribers) closed(sb *subscriber) {
	sb.gone = true
	if !s.serving {
		s.compact()
	}
}

func (s *subscribers) compact() {
	kept := s.list[:0]
	for _, sb := range s.list {
		if !sb.gone {
			kept = append(kept, sb)
		}
	}
	clear(s.list[len(kept):])
	s.list = kept
	if len(kept) == 0 {
		s.list = nil
	}
	s.has.Store(len(kept) > 0)
}

// serveOne gives a drained stream the lines after its cursor (up to the
// turn budget), or a keep-alive line when it has been quiet for the
// interval; a stream that has not drained is only checked against its bound.
func (h *handler) serveOne(sb *subscriber, now time.Time) {
	c := sb.c
	if !sb.endBy.IsZero() {
		if !now.Before(sb.endBy) {
			c.Abort() // its final line was not read in time
		}
		return
	}
	if c.Closing() {
		return // closes on its own; OnClose forgets it
	}
	if sb.held != nil {
		if !c.Stream(sb.held, false) {
			return
		}
		sb.held = nil
	}
	sent := 0
	for c.Owed() == 0 {
		if sent >= streamTurnBudget {
			h.subs.wake.Store(true) // more to come: another turn, after the other connections
			h.loop.Wake()
			return
		}
		lines, err := sb.sub.Next(h.subs.scratch[:0], streamChunkBytes)
		h.subs.scratch = lines[:0]
		if err != nil {
			h.endWithError(sb, err, now)
			return
		}
		if len(lines) == 0 {
			break
		}
		sent += len(lines)
		sb.lastLine = now
		frame := http1.AppendChunk(make([]byte, 0, len(lines)+20), lines) // the connection owns it
		if !c.Stream(frame, false) {
			sb.held = frame
			return
		}
	}
	if h.tooSlow(sb, now) || c.Owed() > 0 {
		return
	}
	if sent == 0 && now.Sub(sb.lastLine) >= h.s.keepalive {
		line := api.AppendKeepaliveLine(h.subs.scratch[:0], h.s.store.Log.LastVersion())
		c.Stream(http1.AppendChunk(make([]byte, 0, len(line)+8), line), false)
		sb.lastLine = now
	}
}

// slowConsumerGrace is how long a subscriber may stay above its buffer.
func (h *handler) slowConsumerGrace() time.Duration {
	return time.Duration(h.s.cfg.Subscription.SlowConsumerGraceSeconds) * time.Second
}

// tooSlow applies the slow-consumer rule (see the file comment) and ends
// the stream when it is broken; it reports whether it did.
func (h *handler) tooSlow(sb *subscriber, now time.Time) bool {
	limit := h.s.cfg.Subscription.MaxBufferSizeBytes
	untaken := sb.sub.Behind() + sb.c.Owed()
	if untaken <= limit {
		sb.overSince = time.Time{}
		return false
	}
	if sb.overSince.IsZero() {
		sb.overSince = now
	}
	over := now.Sub(sb.overSince)
	if over < h.slowConsumerGrace() {
		return false // armTimer brings the loop back at the deadline
	}
	h.endWithError(sb, fmt.Errorf("%w: %d bytes not taken for %v, limit %d bytes for %v",
		store.ErrSlowConsumer, untaken, over.Round(time.Millisecond), limit, h.slowConsumerGrace()), now)
	return true
}

func (h *handler) endWithError(sb *subscriber, err error, now time.Time) {
	code := api.SubscribeErrSlowConsumer
	if errors.Is(err, store.ErrLogClosed) {
		code = api.SubscribeErrShutdown
	} else {
		h.s.store.Log.NoteSlowConsumer()
	}
	h.endStream(sb, code, err.Error(), now)
}

// endStream sends the final error line and the last chunk; the connection
// closes once they are written, or at the grace deadline.
func (h *handler) endStream(sb *subscriber, code, msg string, now time.Time) {
	line := api.AppendSubscribeErrorLine(nil, code, msg)
	frame := append(sb.held, http1.AppendLastChunk(http1.AppendChunk(make([]byte, 0, len(line)+24), line))...)
	sb.held = nil
	sb.endBy = now.Add(h.s.endGrace)
	if !sb.c.Stream(frame, true) {
		sb.c.Abort()
	}
}

// armTimer sets the loop's timer to the earliest keep-alive, grace or end
// deadline. A stream that has not drained needs no keep-alive (OnDrained
// wakes the loop), but one over its buffer needs its grace deadline, and
// the timer still comes once per interval so every stream is rechecked.
func (h *handler) armTimer(now time.Time) {
	s := &h.subs
	if len(s.list) == 0 {
		s.timer = time.Time{}
		h.loop.SetTimer(s.timer)
		return
	}
	next := now.Add(h.s.keepalive)
	for _, sb := range s.list {
		var t time.Time
		switch {
		case !sb.endBy.IsZero():
			t = sb.endBy
		case sb.held != nil:
			t = now.Add(time.Millisecond)
		case !sb.overSince.IsZero():
			t = sb.overSince.Add(h.slowConsumerGrace())
		case sb.c.Owed() > 0 || sb.c.Closing():
			continue
		default:
			t = sb.lastLine.Add(h.s.keepalive)
		}
		if t.Before(next) {
			next = t
		}
	}
	s.timer = next
	h.loop.SetTimer(next)
}
