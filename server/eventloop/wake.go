// Waking the loop from other goroutines: posts about a connection and plain
// wake-ups through the eventfd. post, Wake and wake are safe from any
// goroutine; drainPosts and service run on the loop.

package eventloop

import "golang.org/x/sys/unix"

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
// the client caught up, finish a draining connection, and begin the drain
// of one whose ending response a Sender queued.
func (l *Loop) service(c *Conn) {
	c.mu.Lock()
	c.postPending = false
	closed, ending := c.closed, c.closeQueued
	c.closeSeen = ending
	c.mu.Unlock()
	if closed {
		return
	}
	if ending && c.parsing() {
		// A Sender queued the response that ends the connection (a
		// pipeline stage refused it, say) while the handler kept reading:
		// read no more requests, close once it is written.
		l.beginDrain(c)
		if c.isGone() {
			return
		}
	}
	l.flushAndProgress(c)
}
