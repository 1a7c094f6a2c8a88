package bench

import (
	"math"

	dto "github.com/prometheus/client_model/go"

	"weaseldb/artifacts"
)

// readHistograms is one histogram family's children by one label's value
// (nil without the family).
func readHistograms(families map[string]*dto.MetricFamily, name, label string) map[string]*dto.Histogram {
	fam, ok := families[name]
	if !ok {
		return nil
	}
	out := map[string]*dto.Histogram{}
	for _, m := range fam.GetMetric() {
		if m.GetHistogram() == nil {
			continue
		}
		for _, l := range m.GetLabel() {
			if l.GetName() == label {
				out[l.GetValue()] = m.GetHistogram()
			}
		}
	}
	return out
}

// waitDeltas is each stage's waits between two scrapes, per bucket (nil
// when either scrape lacks them, or a stage's buckets changed between
// the two, which one server never does).
func waitDeltas(before, after map[string]*dto.Histogram) map[string]artifacts.StageWait {
	if before == nil || after == nil {
		return nil
	}
	out := map[string]artifacts.StageWait{}
	for stage, a := range after {
		b, ok := before[stage]
		if !ok {
			continue
		}
		if w, ok := histogramDelta(b, a); ok {
			out[stage] = w
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// histogramDelta turns two cumulative histograms into the counts per
// bucket recorded between them.
func histogramDelta(before, after *dto.Histogram) (artifacts.StageWait, bool) {
	ab, bb := after.GetBucket(), before.GetBucket()
	if len(ab) != len(bb) {
		return artifacts.StageWait{}, false
	}
	w := artifacts.StageWait{SumS: after.GetSampleSum() - before.GetSampleSum()}
	var prev uint64
	for i, bucket := range ab {
		if bucket.GetUpperBound() != bb[i].GetUpperBound() {
			return artifacts.StageWait{}, false
		}
		if math.IsInf(bucket.GetUpperBound(), 1) {
			continue // the count is the +Inf bucket's
		}
		cum := bucket.GetCumulativeCount() - bb[i].GetCumulativeCount()
		w.UpperS = append(w.UpperS, bucket.GetUpperBound())
		w.Counts = append(w.Counts, cum-prev)
		prev = cum
	}
	w.Counts = append(w.Counts, after.GetSampleCount()-before.GetSampleCount()-prev)
	return w, true
}
