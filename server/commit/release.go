// The release stage: each release thread sends the answers of the entries
// it owns (Index % threads) and hands started subscriptions on. A
// releaser is owned by its release thread's goroutine alone.

package commit

import (
	"time"

	"weaseldb/server/metrics"
	"weaseldb/server/pipeline"
	"weaseldb/server/store"
)

// releaser is one release thread's state.
type releaser[C comparable] struct {
	s     Sender[C]
	tally *metrics.RequestTally // the batch's answered requests, flushed once a batch
	subs  []startedSub[C]
}

type startedSub[C comparable] struct {
	conn C
	sub  *store.Subscription
}

// release sends the responses of the entries this thread owns (Index %
// threads) through its Sender, which may group them per connection; a
// connection closed in the meantime drops them safely. Subscriptions go to
// their streamer once their response head is sent. now is when the batch
// was acquired (monoclock): the end of each request's latency.
//
// The request metrics are tallied per batch and added before the Sender
// delivers any answer counted in them (it delivers a connection's answers
// when the next Send is for another connection, or at Flush): a client
// that scrapes once its answer came finds its request counted, as when
// each request was recorded before its own send.
func (cp *Pipeline[C]) release(b pipeline.StageBatch[Entry[C]], thread int, now int64, r *releaser[C]) (shutdowns int) {
	s := r.s
	var none, last C
	split := cp.opt.ReleaseThreads > 1 // one release thread owns every entry
	for i := 0; i < b.Len(); i++ {
		if split && !cp.owns(b.Index(i), thread) {
			continue
		}
		e := b.At(i)
		switch e.Kind {
		case KindShutdown:
			shutdowns++
			continue
		case kindNone:
			continue
		}
		r.tally.Add(e.Route, e.Status, time.Duration(now-e.Start))
		if cp.opt.released != nil {
			cp.opt.released(e)
		}
		if e.Reply.Conn != none { // none only in tests
			if e.Reply.Conn != last && last != none {
				r.tally.Flush() // this Send delivers last's answers
			}
			last = e.Reply.Conn
			s.Send(e.Reply.Conn, e.Reply.Seq, e.Resp, e.Reply.Close)
			if e.Kind == KindSubscribe && e.Data.Sub != nil && cp.opt.OnSubscribe != nil {
				r.subs = append(r.subs, startedSub[C]{e.Reply.Conn, e.Data.Sub})
			}
		}
		// Drop the references the ring slot would keep alive. Kind stays:
		// it is the only field other release threads may read.
		e.Reply.Conn, e.Reply.RequestID, e.Resp, e.Data = none, nil, nil, nil
	}
	r.tally.Flush()
	s.Flush()
	for i, st := range r.subs {
		cp.opt.OnSubscribe(st.conn, st.sub)
		r.subs[i] = startedSub[C]{}
	}
	r.subs = r.subs[:0]
	return shutdowns
}
