package loadtester

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// A run whose data file runs out (--data-policy once: each row once per
// run). The request that finds no row is not sent, and the measured
// window ends where it was due: every request due before then had a row
// and is accounted for as always; nothing due after it is, since it could
// not have been sent. The run is not interrupted: its result stands, and
// says in a warning where and why it ended.
//
// Who owns what: rowsOut is called on a network thread's loop; it moves
// the runner's windowEnd (atomic, only ever earlier: each thread that
// finds no row may have been due before the one that found none first)
// and wakes the collector (endEarly) and every thread, which take the new
// end on their wake (loop.go, onWake).

// errRowsOut is the cause the collector is woken with.
var errRowsOut = errors.New("the data file has no row left (--data-policy once)")

// rowsOut ends this thread's window at due, the due time of a request its
// data file had no row for, and the run's with it.
func (a *accounts) rowsOut(due int64) {
	a.win.closeAt = min(a.win.closeAt, due)
	a.r.endAt(due)
}

// endAt moves the window's end back to at (never later) and wakes
// everyone to see it.
func (r *runner) endAt(at int64) {
	for {
		cur := r.windowEnd.Load()
		if at >= cur || r.windowEnd.CompareAndSwap(cur, at) {
			break
		}
	}
	if r.rowsOut.Swap(true) {
		return // everyone was woken already; a thread's later refusal only moved the end
	}
	r.endEarly(errRowsOut)
	for _, t := range r.threads {
		t.wake()
	}
}

// rowsOutWarning says where the run ended and why.
func (r *runner) rowsOutWarning(end int64) string {
	if end <= r.mStart {
		return "the data file ran out of rows during the warm-up (--data-policy once): nothing was measured; give more rows, a shorter --warmup, or --data-policy loop"
	}
	return fmt.Sprintf("the data file ran out of rows %v into the measured window (--data-policy once): the run ended there, and the counts are of the requests due until then",
		time.Duration(end-r.mStart).Round(time.Millisecond))
}

// checkData checks what the run's data files feed: every {{data.COLUMN}}
// names a column of its file, and a --data file is read by something.
func (c *Config) checkData() []error {
	uses := false
	kinds, _, err := newKinds(c, "00000000")
	if err != nil {
		return []error{err}
	}
	for _, k := range kinds {
		uses = uses || k.Feed == c.Data && usesData(k.tmpl.head, k.tmpl.body)
	}
	if c.Data != nil && !uses {
		return []error{fmt.Errorf("--data %s: nothing reads it: name a column as {{data.COLUMN}} in --path, --header or --body (columns: %s)",
			c.Data.Path, strings.Join(c.Data.Columns, ", "))}
	}
	return nil
}
