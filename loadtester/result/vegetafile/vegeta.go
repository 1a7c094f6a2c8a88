// Package vegetafile writes and reads a run's per-request results in
// vegeta's own encoding (it imports vegeta's library, and through it
// net/http and HTTP/2, which the result package keeps out of its readers).
package vegetafile

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"time"
	"weaseldb/loadtester/result"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// Results in vegeta's own encoding (gob, what `vegeta attack` writes), which
// `vegeta report` and `vegeta plot` read: one result per due request of the
// measured window, or an even sample of them (Config.VegetaMax).

// WriteVegeta writes the results res kept (Config.VegetaMax) in vegeta's
// encoding, numbered from 0 without gaps. Unfinished and dropped requests
// carry the error "unfinished" or "dropped" and their lower bound as
// latency.
func WriteVegeta(w io.Writer, res *result.Result) error {
	v := res.Vegeta()
	if v == nil {
		return errors.New("the run kept no per-request results (Config.VegetaMax 0)")
	}
	bw := bufio.NewWriter(w)
	enc := vegeta.NewEncoder(bw)
	for i, s := range v.Kept {
		r := vegeta.Result{Attack: "load_tester", Seq: uint64(i), Code: s.Code,
			Timestamp: v.Base.Add(time.Duration(s.Start)), Latency: time.Duration(s.Latency),
			BytesOut: v.BytesOut, Method: v.Methods[s.Kind], URL: v.URLs[s.Kind], Headers: http.Header{}}
		if s.Err != "" {
			r.Error = s.Err
		} else if s.Code < 200 || s.Code >= 400 {
			r.Error = http.StatusText(int(s.Code))
			if r.Error == "" {
				r.Error = fmt.Sprintf("status %d", s.Code)
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
