package store

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// Errors that end a subscription.
var (
	// ErrSlowConsumer: the subscriber fell too far behind: the log was
	// trimmed past its cursor (Next), or the server cut it for holding
	// more than max_buffer_size_bytes untaken for too long (server/app).
	ErrSlowConsumer = errors.New("subscriber fell too far behind")
	// ErrLogTruncated: the requested start version is no longer kept.
	ErrLogTruncated = errors.New("requested version is no longer in the log")
	// ErrLogClosed: the server is shutting down.
	ErrLogClosed = errors.New("log closed")
)

// Log is the subscription log: the encoded lines of committed transactions
// in version order, shared by every subscriber.
//
// Goroutine-safe. The persist stage is the only writer (Append, Publish);
// subscriber goroutines read. Subscribers hold only a cursor, never a copy,
// so many subscribers cost the commit path nothing but a short write lock
// per batch; a subscriber's backlog is the bytes between its cursor and the
// end of the log (Behind), which the server measures over time to decide
// when a consumer is too slow.
//
// The log keeps at most maxBytes of lines and, within that, each line
// until it is past both retention limits (so maxBytes bounds memory
// whatever the policies). A subscriber whose cursor the trim passes is cut.
type Log struct {
	mu        sync.RWMutex
	entries   deque[logEntry] // guarded by mu
	first     uint64          // absolute index of entries.at(0); guarded by mu
	start     int64           // byte offset of entries.at(0); guarded by mu
	end       int64           // byte offset after the last entry; guarded by mu
	last      int64           // version of the last entry (or the last published version); guarded by mu
	truncated int64           // versions at or below it may be missing; guarded by mu
	notify    chan struct{}   // closed by Publish when someone waits; guarded by mu
	waiting   bool            // guarded by mu
	closed    bool            // guarded by mu
	maxBytes  int64           // immutable
	retention *Retention      // immutable

	slowCut atomic.Int64 // subscribers the server cut as slow consumers (NoteSlowConsumer)
}

type logEntry struct {
	version int64
	offset  int64 // byte offset of line in the stream
	at      time.Time
	line    []byte // immutable once appended
}

// NewLog keeps at most maxBytes of lines (at least 1).
func NewLog(maxBytes int64, r *Retention) *Log {
	return &Log{maxBytes: max(maxBytes, 1), retention: r, notify: make(chan struct{})}
}

// Append adds the line of the transaction committed at version (built with
// api.AppendTransactionLine; the log keeps line, so the caller must not
// reuse it). Subscribers calling Next see it at once; Publish wakes those
// waiting. Persist stage only.
func (l *Log) Append(version int64, line []byte, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.entries.push(logEntry{version: version, offset: l.end, at: now, line: line})
	l.end += int64(len(line))
	l.last = version
	l.trim(now)
}

// Publish wakes the subscribers waiting for new lines, and records that
// every version up to lastVersion is final (so a subscriber's keep-alive
// can report it). Persist stage only, once per batch.
func (l *Log) Publish(lastVersion int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.last = max(l.last, lastVersion)
	if l.waiting {
		close(l.notify)
		l.notify = make(chan struct{})
		l.waiting = false
	}
}

// Close ends every subscription with ErrLogClosed (server shutdown).
func (l *Log) Close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.closed {
		l.closed = true
		close(l.notify)
	}
}

// trim drops the oldest lines beyond maxBytes or past retention, but never
// the newest (a line bigger than maxBytes still reaches its subscribers);
// mu held.
func (l *Log) trim(now time.Time) {
	lim := l.retention.Limits()
	for l.entries.len() > 1 {
		e := l.entries.front()
		over := l.end-l.start > l.maxBytes
		if !over && !lim.Past(e.version, l.last, e.at, now) {
			return
		}
		dropped := l.entries.popFront() // e points at the cleared slot now
		l.first++
		l.start = dropped.offset + int64(len(dropped.line))
		l.truncated = max(l.truncated, dropped.version)
	}
}

// NoteSlowConsumer counts a subscriber the server cut for being too slow
// (any goroutine; for metrics).
func (l *Log) NoteSlowConsumer() { l.slowCut.Add(1) }

// SlowConsumersCut is the number counted by NoteSlowConsumer.
func (l *Log) SlowConsumersCut() int64 { return l.slowCut.Load() }

// LastVersion is the newest version published.
func (l *Log) LastVersion() int64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.last
}

// Subscription is one consumer's cursor into the Log. Owned by the
// goroutine serving that subscriber; not goroutine-safe itself.
type Subscription struct {
	log    *Log
	next   uint64   // absolute index of the next entry to deliver
	offset int64    // byte offset of that entry
	lines  [][]byte // scratch: lines picked under the lock, copied after
	err    error
}

// Subscribe starts a cursor at the first transaction with version >=
// fromVersion (0: from the next one committed). It fails with
// ErrLogTruncated when transactions from fromVersion on may be gone.
func (l *Log) Subscribe(fromVersion int64) (*Subscription, error) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if l.closed {
		return nil, ErrLogClosed
	}
	s := &Subscription{log: l}
	if fromVersion <= 0 {
		s.next, s.offset = l.first+uint64(l.entries.len()), l.end
		return s, nil
	}
	if l.truncated > 0 && fromVersion <= l.truncated {
		return nil, fmt.Errorf("%w: oldest kept is %d, asked for %d", ErrLogTruncated, l.truncated+1, fromVersion)
	}
	i := l.entries.search(func(e *logEntry) bool { return e.version >= fromVersion })
	s.next = l.first + uint64(i)
	s.offset = l.end
	if i < l.entries.len() {
		s.offset = l.entries.at(i).offset
	}
	return s, nil
}

// Next appends to dst the lines available after the cursor, whole lines,
// up to about maxBytes (at least one line), and advances the cursor. It
// never blocks: with nothing new it returns dst unchanged; then wait on
// Wait(). It fails with ErrSlowConsumer when the log was trimmed past the
// cursor, ErrLogClosed at shutdown; the error is sticky. How far behind a
// subscriber may be is the server's rule (Behind), not Next's: a single
// line bigger than the subscriber's buffer is still handed out.
//
// The server should call Next only when the connection has drained what it
// was given, so that the backlog stays in the shared log where it is
// measured, not in a per-connection buffer.
func (s *Subscription) Next(dst []byte, maxBytes int) ([]byte, error) {
	if s.err != nil {
		return dst, s.err
	}
	s.lines = s.lines[:0]
	l := s.log
	l.mu.RLock()
	switch {
	case l.closed:
		s.err = ErrLogClosed
	case s.next < l.first:
		s.err = fmt.Errorf("%w: the log (at most %d bytes) was trimmed past it, %d bytes behind", ErrSlowConsumer, l.maxBytes, l.end-s.offset)
	default:
		total := 0
		for i := int(s.next - l.first); i < l.entries.len() && (total == 0 || total < maxBytes); i++ {
			e := l.entries.at(i)
			s.lines = append(s.lines, e.line)
			total += len(e.line)
			s.offset = e.offset + int64(len(e.line))
			s.next++
		}
	}
	l.mu.RUnlock()
	// Lines are immutable: copy them without holding the lock, so the
	// persist stage's Append never waits for a subscriber's copy.
	for _, line := range s.lines {
		dst = append(dst, line...)
	}
	clear(s.lines)
	return dst, s.err
}

// Wait returns a channel closed when lines are published after this call
// (or the log closes). Call Next first; a publish between Next and Wait is
// caught because Wait then sees the cursor behind the end.
func (s *Subscription) Wait() <-chan struct{} {
	l := s.log
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed || s.offset < l.end {
		ch := make(chan struct{})
		close(ch)
		return ch
	}
	l.waiting = true
	return l.notify
}

// Behind is how many bytes the subscriber is behind the end of the log.
func (s *Subscription) Behind() int64 {
	s.log.mu.RLock()
	defer s.log.mu.RUnlock()
	return s.log.end - s.offset
}
