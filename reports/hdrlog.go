package reports

import (
	"fmt"
	"os"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// HdrLog is the load tester's HdrHistogram interval log, reduced to what the
// report shows: one row per interval plus the merged total.
type HdrLog struct {
	Intervals []HdrInterval
	Total     *hdrhistogram.Histogram
}

// HdrInterval is one interval histogram of the log, in nanoseconds.
type HdrInterval struct {
	StartS float64 // interval start, seconds since the first interval's start
	EndS   float64
	Count  int64
	P50Ns  int64
	P99Ns  int64
	MaxNs  int64
}

// ReadHdrLog reads and merges an HdrHistogram interval log.
func ReadHdrLog(path string) (*HdrLog, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	reader := hdrhistogram.NewHistogramLogReader(f)
	log := &HdrLog{}
	var firstStartMs int64
	for {
		h, err := reader.NextIntervalHistogram()
		if err != nil {
			return nil, fmt.Errorf("read %s interval %d: %w", path, len(log.Intervals), err)
		}
		if h == nil {
			break
		}
		if len(log.Intervals) == 0 {
			firstStartMs = h.StartTimeMs()
			log.Total = hdrhistogram.New(h.LowestTrackableValue(), h.HighestTrackableValue(), int(h.SignificantFigures()))
		}
		if dropped := log.Total.Merge(h); dropped != 0 {
			return nil, fmt.Errorf("read %s: merging interval %d dropped %d values", path, len(log.Intervals), dropped)
		}
		log.Intervals = append(log.Intervals, HdrInterval{
			StartS: float64(h.StartTimeMs()-firstStartMs) / 1000,
			EndS:   float64(h.EndTimeMs()-firstStartMs) / 1000,
			Count:  h.TotalCount(),
			P50Ns:  h.ValueAtQuantile(50),
			P99Ns:  h.ValueAtQuantile(99),
			MaxNs:  h.Max(),
		})
	}
	if len(log.Intervals) == 0 {
		return nil, fmt.Errorf("read %s: no interval histograms", path)
	}
	return log, nil
}

// DecodeHistogram decodes the load result's "histogram" field: V2 compressed
// HdrHistogram encoding, already base64 text ("HISTF...").
func DecodeHistogram(encoded string) (*hdrhistogram.Histogram, error) {
	if encoded == "" {
		return nil, fmt.Errorf("decode histogram: empty")
	}
	h, err := hdrhistogram.Decode([]byte(encoded))
	if err != nil {
		return nil, fmt.Errorf("decode histogram: %w", err)
	}
	return h, nil
}
