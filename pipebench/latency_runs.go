package pipebench

import (
	"weaseldb/server/pipeline"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// The latency family's four runs, each a latencyRun (latency.go drives
// them): the pipeline and a Go channel, one way and round trip.
//
// Who owns what: a run's histogram is written by one goroutine only (the
// one-way runs' by the stage goroutine, the round trips' by the driver) and
// read by MeasureLatency once that goroutine has signalled it is done; the
// pipeline or channel between the two is the only state they share.

// pipelineOneWay: the producer publishes one timestamped item at a time to
// a one-stage pipeline; the stage records pickup minus publish.
type pipelineOneWay struct {
	p *pipeline.Pipeline[uint64]
	h *hdrhistogram.Histogram
}

func (r *pipelineOneWay) init(c LatencyCase) (err error) {
	r.h = NewLatencyHistogram()
	r.p, err = pipeline.New[uint64](c.Strategy, []int{1}, c.LgSlots)
	return err
}

func (r *pipelineOneWay) pinStage()  { r.p.MarkPinned(0, 0) }
func (r *pipelineOneWay) pinDriver() {}

func (r *pipelineOneWay) stage() {
	for {
		b := r.p.Acquire(0, 0, 0, true)
		picked := now()
		first, second := b.Slices()
		stop := r.take(first, picked) || r.take(second, picked)
		b.Release()
		if stop {
			return
		}
	}
}

func (r *pipelineOneWay) take(items []uint64, picked int64) bool {
	for _, v := range items {
		switch v {
		case stopMark:
			return true
		case warmupMark:
		default:
			record(r.h, picked-int64(v))
		}
	}
	return false
}

func (r *pipelineOneWay) push(v uint64, stamp bool) {
	b := r.p.Push(1, true)
	if stamp {
		v = uint64(now())
	}
	*b.At(0) = v
	b.Release()
}

func (r *pipelineOneWay) send(rec bool) {
	if rec {
		r.push(0, true)
	} else {
		r.push(warmupMark, false)
	}
}

func (r *pipelineOneWay) stop()                         { r.push(stopMark, false) }
func (r *pipelineOneWay) hist() *hdrhistogram.Histogram { return r.h }

// pipelineRoundTrip: ping (the driver) publishes a timestamp to pipeline a;
// pong (the stage goroutine, a's stage) publishes it on to pipeline b; ping,
// b's stage, picks it up and records now minus the timestamp.
type pipelineRoundTrip struct {
	a, b *pipeline.Pipeline[uint64]
	h    *hdrhistogram.Histogram
}

func (r *pipelineRoundTrip) init(c LatencyCase) (err error) {
	r.h = NewLatencyHistogram()
	if r.a, err = pipeline.New[uint64](c.Strategy, []int{1}, c.LgSlots); err != nil {
		return err
	}
	r.b, err = pipeline.New[uint64](c.Strategy, []int{1}, c.LgSlots)
	return err
}

func (r *pipelineRoundTrip) pinStage()  { r.a.MarkPinned(0, 0) }
func (r *pipelineRoundTrip) pinDriver() { r.b.MarkPinned(0, 0) }

func pushOne(p *pipeline.Pipeline[uint64], v uint64) {
	b := p.Push(1, true)
	*b.At(0) = v
	b.Release()
}

func (r *pipelineRoundTrip) stage() {
	for {
		in := r.a.Acquire(0, 0, 0, true)
		first, second := in.Slices()
		stop := false
		for _, run := range [][]uint64{first, second} {
			for _, v := range run {
				pushOne(r.b, v)
				stop = stop || v == stopMark
			}
		}
		in.Release()
		if stop {
			return
		}
	}
}

// back waits for the one item in flight to come back on b.
func (r *pipelineRoundTrip) back() uint64 {
	in := r.b.Acquire(0, 0, 0, true)
	v := *in.At(0)
	in.Release()
	return v
}

func (r *pipelineRoundTrip) send(rec bool) {
	sent := now()
	pushOne(r.a, uint64(sent))
	r.back()
	if rec {
		record(r.h, now()-sent)
	}
}

func (r *pipelineRoundTrip) stop() {
	pushOne(r.a, stopMark)
	for r.back() != stopMark {
	}
}

func (r *pipelineRoundTrip) hist() *hdrhistogram.Histogram { return r.h }

// channelOneWay is pipelineOneWay over a buffered chan uint64 of the same
// capacity: the send wakes a parked receiver (the Go runtime's goready).
type channelOneWay struct {
	ch chan uint64
	h  *hdrhistogram.Histogram
}

func (r *channelOneWay) init(c LatencyCase) error {
	r.h, r.ch = NewLatencyHistogram(), make(chan uint64, 1<<c.LgSlots)
	return nil
}

func (r *channelOneWay) pinStage()  {}
func (r *channelOneWay) pinDriver() {}

func (r *channelOneWay) stage() {
	for v := range r.ch {
		picked := now()
		if v != warmupMark {
			record(r.h, picked-int64(v))
		}
	}
}

func (r *channelOneWay) send(rec bool) {
	if rec {
		r.ch <- uint64(now())
	} else {
		r.ch <- warmupMark
	}
}

func (r *channelOneWay) stop()                         { close(r.ch) }
func (r *channelOneWay) hist() *hdrhistogram.Histogram { return r.h }

// channelRoundTrip is pipelineRoundTrip over two channels.
type channelRoundTrip struct {
	ping, pong chan uint64
	h          *hdrhistogram.Histogram
}

func (r *channelRoundTrip) init(c LatencyCase) error {
	r.h = NewLatencyHistogram()
	r.ping, r.pong = make(chan uint64, 1<<c.LgSlots), make(chan uint64, 1<<c.LgSlots)
	return nil
}

func (r *channelRoundTrip) pinStage()  {}
func (r *channelRoundTrip) pinDriver() {}

func (r *channelRoundTrip) stage() {
	for v := range r.ping {
		r.pong <- v
	}
}

func (r *channelRoundTrip) send(rec bool) {
	sent := now()
	r.ping <- uint64(sent)
	<-r.pong
	if rec {
		record(r.h, now()-sent)
	}
}

func (r *channelRoundTrip) stop()                         { close(r.ping) }
func (r *channelRoundTrip) hist() *hdrhistogram.Histogram { return r.h }
