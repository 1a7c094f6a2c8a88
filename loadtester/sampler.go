package loadtester

// sample is one request kept for --vegeta.
type sample struct {
	start   int64 // intended send time, ns since the run's origin
	latency int64
	code    uint16
	kind    uint8     // the request's kind (workloads)
	errKind errorKind // 0: none; else kind+1, or sampleUnfinished/sampleDropped
}

// Sample kinds beyond the error kinds: a request the run ended without an
// answer to, and one it never sent (their latency is a lower bound).
const (
	sampleUnfinished = numErrorKinds + 1 + iota
	sampleDropped
)

// sampleError names a sample's error for vegeta ("" for none).
func (s sample) errorName() string {
	switch s.errKind {
	case 0:
		return ""
	case sampleUnfinished:
		return "unfinished"
	case sampleDropped:
		return "dropped"
	}
	return (s.errKind - 1).String()
}

// sampler keeps an evenly spaced subset of one thread's results within a
// fixed budget: every stride-th result; when the budget fills, every other
// kept result is dropped and the stride doubles. Strides stay powers of two,
// so threads can be brought to a common stride at the end.
type sampler struct {
	max    int
	stride int
	skip   int
	kept   []sample
	seen   int64 // results offered
}

func newSampler(max int) *sampler { return &sampler{max: max, stride: 1} }

// add offers a result of the measured window (the caller leaves out the
// warm-up's, as the totals do).
func (s *sampler) add(x sample) {
	s.seen++
	if s.skip > 0 {
		s.skip--
		return
	}
	if len(s.kept) == s.max {
		s.halve()
	}
	s.kept = append(s.kept, x)
	s.skip = s.stride - 1
}

func (s *sampler) halve() {
	n := 0
	for i := 0; i < len(s.kept); i += 2 {
		s.kept[n] = s.kept[i]
		n++
	}
	s.kept = s.kept[:n]
	s.stride *= 2
}

// thin brings the sampler to a larger power-of-two stride.
func (s *sampler) thin(stride int) {
	for s.stride < stride {
		s.halve()
	}
}
