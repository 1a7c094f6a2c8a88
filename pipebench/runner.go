package pipebench

import (
	"errors"
	"fmt"
	"sync"

	"weaseldb/server/cpuwork"
	"weaseldb/server/pipeline"
)

// Item values above the data range mark the end of a timed run and shutdown.
const (
	finishMark   = ^uint64(0)
	shutdownMark = ^uint64(0) - 1
)

// Hooks run on the goroutines a runner starts, before they take their first
// item: cmd/bench_pipeline uses them to pin threads to CPUs. Stage is the
// stage index; the producer is the caller of Run and is not hooked here.
type Hooks struct {
	StageStart func(stage int) error
	// Pinned: StageStart pins each stage's goroutine to a CPU of its own,
	// so the pipeline's spins must not yield (pipeline.MarkPinned), as
	// the server's pinned stages do not.
	Pinned bool
}

// Runner moves items through one case's stages. Start it, call Run for each
// timed run, then Close.
type Runner interface {
	// Run pushes items (in batches of the case's Batch), then a finish
	// marker, and returns once the last stage has seen the marker.
	Run(items int)
	// Close stops and joins the stage goroutines.
	Close()
}

// Start launches a case's stage goroutines.
func Start(c Case, h Hooks) (Runner, error) {
	if c.Stages < 1 || c.Batch < 1 {
		return nil, fmt.Errorf("pipebench: case %s: need stages >= 1 and batch >= 1", c.Name)
	}
	var r Runner
	var g *stageGroup
	switch c.Impl {
	case ImplPipeline:
		pr, err := startPipeline(c, h)
		if err != nil {
			return nil, err
		}
		r, g = pr, &pr.g
	case ImplChannel:
		cr := startChannel(c, h)
		r, g = cr, &cr.g
	case ImplChannelBatched:
		br := startChannelBatched(c, h)
		r, g = br, &br.g
	default:
		return nil, fmt.Errorf("pipebench: unknown impl %q", c.Impl)
	}
	if err := g.started(); err != nil {
		r.Close()
		return nil, fmt.Errorf("pipebench: case %s: %w", c.Name, err)
	}
	return r, nil
}

// stageGroup runs the stage goroutines, reporting hook errors.
type stageGroup struct {
	wg       sync.WaitGroup
	ready    sync.WaitGroup // every stage goroutine has run its hook
	finished chan struct{}
	errMu    sync.Mutex
	err      error
}

func (g *stageGroup) goStage(h Hooks, stage int, body func()) {
	g.wg.Add(1)
	g.ready.Add(1)
	go func() {
		defer g.wg.Done()
		if h.StageStart != nil {
			if err := h.StageStart(stage); err != nil {
				g.errMu.Lock()
				g.err = errors.Join(g.err, fmt.Errorf("stage %d: %w", stage, err))
				g.errMu.Unlock()
			}
		}
		g.ready.Done()
		body()
	}()
}

// started waits until every stage goroutine has run its hook and returns
// their errors.
func (g *stageGroup) started() error {
	g.ready.Wait()
	g.errMu.Lock()
	defer g.errMu.Unlock()
	return g.err
}

// work is the per-item spin work; with no spin iterations the call is left
// out, so a no-spin case measures the hand-off alone.
func work(spin int) {
	if spin > 0 {
		cpuwork.SpendCPUCycles(spin)
	}
}

type pipelineRunner struct {
	c Case
	p *pipeline.Pipeline[uint64]
	g stageGroup
}

func startPipeline(c Case, h Hooks) (*pipelineRunner, error) {
	topo := make([]int, c.Stages)
	for i := range topo {
		topo[i] = 1
	}
	p, err := pipeline.New[uint64](c.Strategy, topo, c.LgSlots)
	if err != nil {
		return nil, fmt.Errorf("pipebench: case %s: %w", c.Name, err)
	}
	r := &pipelineRunner{c: c, p: p}
	r.g.finished = make(chan struct{}, 1)
	for stage := range c.Stages {
		last := stage == c.Stages-1
		r.g.goStage(h, stage, func() {
			if h.Pinned {
				r.p.MarkPinned(stage, 0)
			}
			r.stage(stage, last)
		})
	}
	return r, nil
}

func (r *pipelineRunner) stage(stage int, last bool) {
	stop := false
	for !stop {
		b := r.p.Acquire(stage, 0, 0, true)
		first, second := b.Slices()
		stop = r.consume(first, last) || r.consume(second, last)
		b.Release()
	}
}

// consume does the per-item work on a run of items and reports whether it
// saw the shutdown marker. Plain slice loops: what a user who cares about
// speed writes (StageBatch.At works too, with a bounds check per item).
func (r *pipelineRunner) consume(items []uint64, last bool) bool {
	stop := false
	for _, v := range items {
		work(r.c.SpinIters)
		if v >= shutdownMark {
			if v == shutdownMark {
				stop = true
			} else if last {
				r.g.finished <- struct{}{}
			}
		}
	}
	return stop
}

func (r *pipelineRunner) push(v uint64) {
	b := r.p.Push(1, true)
	*b.At(0) = v
	b.Release()
}

func (r *pipelineRunner) Run(items int) {
	for pushed := 0; pushed < items; {
		b := r.p.Push(min(r.c.Batch, items-pushed), true)
		first, second := b.Slices()
		for i := range first {
			first[i] = uint64(pushed + i)
		}
		pushed += len(first)
		for i := range second {
			second[i] = uint64(pushed + i)
		}
		pushed += len(second)
		b.Release()
	}
	r.push(finishMark)
	<-r.g.finished
}

func (r *pipelineRunner) Close() {
	r.push(shutdownMark)
	r.g.wg.Wait()
}

type channelRunner struct {
	c     Case
	chans []chan uint64
	g     stageGroup
}

func startChannel(c Case, h Hooks) *channelRunner {
	r := &channelRunner{c: c, chans: make([]chan uint64, c.Stages)}
	r.g.finished = make(chan struct{}, 1)
	for i := range r.chans {
		r.chans[i] = make(chan uint64, 1<<c.LgSlots)
	}
	for stage := range c.Stages {
		in := r.chans[stage]
		var out chan uint64
		if stage+1 < c.Stages {
			out = r.chans[stage+1]
		}
		r.g.goStage(h, stage, func() {
			for v := range in {
				work(c.SpinIters)
				if out != nil {
					out <- v
				} else if v >= shutdownMark && v == finishMark {
					r.g.finished <- struct{}{}
				}
			}
			if out != nil {
				close(out)
			}
		})
	}
	return r
}

func (r *channelRunner) Run(items int) {
	in := r.chans[0]
	for i := range items {
		in <- uint64(i)
	}
	in <- finishMark
	<-r.g.finished
}

func (r *channelRunner) Close() {
	close(r.chans[0])
	r.g.wg.Wait()
}

type batchedChannelRunner struct {
	c     Case
	chans []chan []uint64
	g     stageGroup
}

func startChannelBatched(c Case, h Hooks) *batchedChannelRunner {
	r := &batchedChannelRunner{c: c, chans: make([]chan []uint64, c.Stages)}
	r.g.finished = make(chan struct{}, 1)
	for i := range r.chans {
		// The same capacity in items as the pipeline's ring.
		r.chans[i] = make(chan []uint64, max(1, (1<<c.LgSlots)/c.Batch))
	}
	for stage := range c.Stages {
		in := r.chans[stage]
		var out chan []uint64
		if stage+1 < c.Stages {
			out = r.chans[stage+1]
		}
		r.g.goStage(h, stage, func() {
			for batch := range in {
				for _, v := range batch {
					work(c.SpinIters)
					if v >= shutdownMark && out == nil && v == finishMark {
						r.g.finished <- struct{}{}
					}
				}
				if out != nil {
					out <- batch
				}
			}
			if out != nil {
				close(out)
			}
		})
	}
	return r
}

// Run sends a freshly allocated slice per batch, as a Go programmer
// handing a batch to another goroutine would (the slice escapes, so a
// recycled one would need its own synchronisation).
func (r *batchedChannelRunner) Run(items int) {
	in := r.chans[0]
	for pushed := 0; pushed < items; {
		n := min(r.c.Batch, items-pushed)
		batch := make([]uint64, n)
		for i := range batch {
			batch[i] = uint64(pushed + i)
		}
		pushed += n
		in <- batch
	}
	in <- []uint64{finishMark}
	<-r.g.finished
}

func (r *batchedChannelRunner) Close() {
	close(r.chans[0])
	r.g.wg.Wait()
}
