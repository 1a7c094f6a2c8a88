// How long a batch waits before each stage takes it
// (weaseldb_pipeline_stage_wait_seconds), from clock reads the stages
// already make: a stage's batch begins with one (start) and ends with one
// (for the batch-time metric); the end is the moment it hands the batch
// on, stamped into every entry it releases (handed), and the next stage's
// start less that stamp is the wait. The sequence stage has no stage
// before it: its wait runs from the read that carried the batch's first
// request (Entry.Start), so it includes the event loop's own turn.
//
// Ownership: handed is written by the stage that holds the entry before
// it releases it, and read by the stage that acquired it after; the
// pipeline's release and acquire order the two. Several release threads
// read the same entries; none writes handed.
//
// A batch's first entry is its oldest, so the wait recorded is the
// longest any of its requests waited for that stage. Every entry is
// stamped, not only a batch's first: the resolve stage may take fewer
// items than the sequence stage released (Options.ResolveBatch), and its
// next batch then begins in the middle of one.

package commit

import (
	"time"

	"weaseldb/server/pipeline"
)

// recordWait records b's wait for stage (as the batch metric does: every
// stage, and release thread 0 for its stage) and stamps it for the next.
// The batch ended busy after start: that end is when it is handed on.
func (cp *Pipeline[C]) recordWait(stage, thread int, b pipeline.StageBatch[Entry[C]], start int64, busy time.Duration) {
	if b.Len() == 0 || stage == 3 && thread != 0 {
		return
	}
	first := b.At(0)
	wait := time.Duration(start - first.handed)
	if stage == 0 {
		wait = time.Duration(start - first.Start)
	}
	cp.opt.Metrics.StageWait(stage, wait)
	if stage < 3 {
		handOn(b, start+int64(busy))
	}
}

// handOn stamps every entry of b with at, the moment its stage released
// it (a monoclock reading, as Entry.Start and the stages' clocks).
func handOn[C comparable](b pipeline.StageBatch[Entry[C]], at int64) {
	for i := 0; i < b.Len(); i++ {
		b.At(i).handed = at
	}
}
