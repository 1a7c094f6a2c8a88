package pipeline

import (
	"fmt"
	"testing"
)

// BenchmarkUncontendedBatch is the bookkeeping cost of one batch with no
// other goroutine involved: Push, fill, Release, Acquire, Release on one
// goroutine (so no cache line moves between cores and nobody waits).
func BenchmarkUncontendedBatch(b *testing.B) {
	for _, batch := range []int{1, 16, 64} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) {
			p, err := New[uint64](WaitIfStageEmpty, []int{1}, 10)
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				pb := p.Push(batch, true)
				first, second := pb.Slices()
				for i := range first {
					first[i] = uint64(i)
				}
				for i := range second {
					second[i] = uint64(i)
				}
				pb.Release()
				sb := p.Acquire(0, 0, 0, true)
				sb.Release()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*batch), "ns/item")
		})
	}
}
