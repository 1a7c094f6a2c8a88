package arrival

import (
	"math"
	"sort"
)

// poissonPoints is a Poisson process of rate 1/T in count space: its k-th
// point is T·(e_0 + ... + e_k), each e_i an Exp(1) draw. The draws come
// from a counter-based generator (SplitMix64's output of seed and i), so
// any e_i is found without the ones before it; the sums are kept every
// markEvery points, so any point is at most markEvery draws from a known
// sum, and two cursors make the usual accesses one draw each: the pacer
// walks its next request and, a few ahead, the last one a wake may wait
// for. Every sum is computed forward from a mark in the same order, so a
// point's value never depends on the path that reached it.
type poissonPoints struct {
	base    uint64    // the thread's stream: seed and thread id mixed
	threads float64   // T
	marks   []float64 // marks[m] = e_0 + ... + e_{m·markEvery}
	cur     [2]cursor
	next    int // the cursor to move when neither is behind k within reach
}

// cursor is a known partial sum: e_0 + ... + e_k = s.
type cursor struct {
	k uint64
	s float64
}

const markEvery = 256

func newPoissonPoints(seed uint64, threads, id int) *poissonPoints {
	p := &poissonPoints{base: mix(seed ^ mix(uint64(id)+1)), threads: float64(threads)}
	p.marks = []float64{p.draw(0)}
	p.cur[0] = cursor{s: p.marks[0]}
	p.cur[1] = p.cur[0]
	return p
}

// mix is SplitMix64's output function: its i-th output for a stream is
// mix(base + i·golden).
func mix(z uint64) uint64 {
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

const golden = 0x9e3779b97f4a7c15

// draw is e_i: -ln(1-u), u uniform in [0, 1) from 53 random bits.
func (p *poissonPoints) draw(i uint64) float64 {
	u := float64(mix(p.base+(i+1)*golden)>>11) / (1 << 53)
	return -math.Log1p(-u)
}

// sum is e_0 + ... + e_k, from the nearest cursor at or below k within
// a mark's reach, else from k's mark (becoming a cursor).
func (p *poissonPoints) sum(k uint64) float64 {
	c := -1
	for i := range p.cur {
		if d := k - p.cur[i].k; p.cur[i].k <= k && d <= markEvery && (c < 0 || p.cur[i].k > p.cur[c].k) {
			c = i
		}
	}
	if c < 0 {
		c, p.next = p.next, 1-p.next
		m := k / markEvery
		p.extend(m)
		p.cur[c] = cursor{k: m * markEvery, s: p.marks[m]}
	}
	cu := &p.cur[c]
	for cu.k < k {
		cu.k++
		cu.s += p.draw(cu.k)
	}
	return cu.s
}

// extend adds marks up to m.
func (p *poissonPoints) extend(m uint64) {
	for uint64(len(p.marks)) <= m {
		last := uint64(len(p.marks) - 1)
		s := p.marks[last]
		for i := last*markEvery + 1; i <= (last+1)*markEvery; i++ {
			s += p.draw(i)
		}
		p.marks = append(p.marks, s)
	}
}

func (p *poissonPoints) at(k uint64) float64 { return p.threads * p.sum(k) }

// index finds the first mark at or past n/T (extending the marks as far
// as needed), then steps from the mark before it.
func (p *poissonPoints) index(n float64) uint64 {
	want := n / p.threads
	if want <= p.marks[0] {
		return 0
	}
	if math.IsInf(want, 1) {
		return math.MaxUint64 / 2
	}
	for p.marks[len(p.marks)-1] < want {
		p.extend(uint64(len(p.marks)))
	}
	m := sort.SearchFloat64s(p.marks, want) // first mark >= want; m >= 1
	k := uint64(m-1) * markEvery
	for p.sum(k) < want {
		k++
	}
	return k
}
