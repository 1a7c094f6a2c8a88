package loadtester

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// Results in vegeta's own encoding (gob, what `vegeta attack` writes), which
// `vegeta report` and `vegeta plot` read: one result per due request of the
// measured window, or an even sample of them (Config.VegetaMax).

// vegetaRun is what a run kept for WriteVegeta.
type vegetaRun struct {
	kept     []sample // in due-time order
	offered  int64    // results offered to the samplers
	every    int      // the sampling stride (1: all kept)
	base     time.Time
	urls     []string // by request kind
	methods  []string
	bytesOut uint64 // the request's size (the mean, when requests differ)
}

// VegetaKept says how many per-request results the run kept for WriteVegeta
// and of how many: when it kept fewer, it kept every VegetaSampleEvery-th of
// each network thread, evenly spaced over the run. A result Run did not
// return with VegetaMax set kept none.
func (r *Result) VegetaKept() (kept int, of int64) {
	if r.vegeta == nil {
		return 0, 0
	}
	return len(r.vegeta.kept), r.vegeta.offered
}

// WriteVegeta writes the results res kept (Config.VegetaMax) in vegeta's
// encoding, numbered from 0 without gaps. Unfinished and dropped requests
// carry the error "unfinished" or "dropped" and their lower bound as
// latency.
func WriteVegeta(w io.Writer, res *Result) error {
	v := res.vegeta
	if v == nil {
		return errors.New("the run kept no per-request results (Config.VegetaMax 0)")
	}
	bw := bufio.NewWriter(w)
	enc := vegeta.NewEncoder(bw)
	for i, s := range v.kept {
		r := vegeta.Result{Attack: "load_tester", Seq: uint64(i), Code: s.code,
			Timestamp: v.base.Add(time.Duration(s.start)), Latency: time.Duration(s.latency),
			BytesOut: v.bytesOut, Method: v.methods[s.kind], URL: v.urls[s.kind], Headers: http.Header{}}
		if s.errKind > 0 {
			r.Error = s.errorName()
		} else if s.code < 200 || s.code >= 400 {
			r.Error = http.StatusText(int(s.code))
			if r.Error == "" {
				r.Error = fmt.Sprintf("status %d", s.code)
			}
		}
		if err := enc.Encode(&r); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// MergeVegeta reads the vegeta results files of several instances and
// returns them as one attack: in timestamp order, numbered from 0 without
// gaps (vegeta plot needs that). An empty file holds no results.
func MergeVegeta(files []string) ([]vegeta.Result, error) {
	var all []vegeta.Result
	for _, path := range files {
		results, err := readVegetaFile(path)
		if err != nil {
			return nil, err
		}
		all = append(all, results...)
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].Timestamp.Before(all[j].Timestamp) })
	for i := range all {
		all[i].Seq, all[i].Attack = uint64(i), "load_tester"
		if all[i].Headers == nil {
			all[i].Headers = http.Header{}
		}
	}
	return all, nil
}

// EncodeVegeta writes results in vegeta's encoding.
func EncodeVegeta(w io.Writer, results []vegeta.Result) error {
	bw := bufio.NewWriter(w)
	enc := vegeta.NewEncoder(bw)
	for i := range results {
		if err := enc.Encode(&results[i]); err != nil {
			return err
		}
	}
	return bw.Flush()
}

func readVegetaFile(path string) ([]vegeta.Result, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Size() == 0 {
		return nil, nil
	}
	dec := vegeta.DecoderFor(f)
	if dec == nil {
		return nil, fmt.Errorf("%s: not vegeta results", path)
	}
	var out []vegeta.Result
	for {
		var r vegeta.Result
		if err := dec.Decode(&r); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		out = append(out, r)
	}
}
