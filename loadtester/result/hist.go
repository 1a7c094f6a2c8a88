package result

import hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

// Histogram range: 1 ns to one hour, 3 significant digits. An hour leaves
// room for open-loop runs where requests queue behind a stalled server.
const (
	histLowest  = 1
	histHighest = 3600 * 1e9
	histSigFigs = 3
)

// NewHistogram is a latency histogram of the range every result uses (so
// any two merge exactly).
func NewHistogram() *hdrhistogram.Histogram {
	return hdrhistogram.New(histLowest, histHighest, histSigFigs)
}

func newHistogram() *hdrhistogram.Histogram { return NewHistogram() }
