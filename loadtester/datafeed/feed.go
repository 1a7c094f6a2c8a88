// Package datafeed reads a CSV file of request data (--data, or data = ...
// per kind in a workload) and hands out its rows to the network threads:
// the header row names the columns, each later row is one request's
// values for {{data.COLUMN}}.
//
// Ownership: a Feed is read-only after Load but for its cursor, one atomic
// counter shared by every thread (no lock on the hot path); a Picker is one
// thread's, for the random policy's generator.
package datafeed

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strings"
	"sync/atomic"
	"unicode/utf8"
)

// Policy is how rows are handed out.
type Policy uint8

const (
	Once   Policy = iota // each row once per run; then the run ends (ErrExhausted)
	Loop                 // in order, wrapping
	Random               // uniformly at random, with replacement
)

// ParsePolicy reads --data-policy.
func ParsePolicy(s string) (Policy, error) {
	switch s {
	case "once":
		return Once, nil
	case "", "loop":
		return Loop, nil
	case "random":
		return Random, nil
	}
	return 0, fmt.Errorf("--data-policy %q: want once, loop or random", s)
}

func (p Policy) String() string { return [...]string{"once", "loop", "random"}[p] }

// ErrExhausted is Next's answer under Once when every row was handed out.
var ErrExhausted = errors.New("data file: every row was used once (--data-policy once)")

// Feed is a loaded data file.
type Feed struct {
	Path    string
	Columns []string
	rows    [][]string
	policy  Policy
	next    atomic.Uint64 // rows handed out (Once, Loop)
}

// maxRows bounds a data file's rows (held in memory).
const maxRows = 50_000_000

// Load reads path: a header row of unique, non-empty column names, then
// at least one row, each with as many fields as the header; UTF-8 only.
func Load(path string, policy Policy) (*Feed, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--data: %w", err)
	}
	f, err := parse(data, policy)
	if err != nil {
		return nil, fmt.Errorf("--data %s: %w", path, err)
	}
	f.Path = path
	return f, nil
}

func parse(data []byte, policy Policy) (*Feed, error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")) // a UTF-8 byte order mark, as spreadsheets export
	if !utf8.Valid(data) {
		line := 1 + bytes.Count(data[:firstInvalid(data)], []byte("\n"))
		return nil, fmt.Errorf("line %d: not UTF-8", line)
	}
	r := csv.NewReader(bytes.NewReader(data))
	r.FieldsPerRecord = 0 // every row as long as the header
	header, err := r.Read()
	if err == io.EOF {
		return nil, errors.New("empty: want a header row naming the columns, then rows")
	}
	if err != nil {
		return nil, describe(err)
	}
	seen := map[string]bool{}
	for i, name := range header {
		if name == "" {
			return nil, fmt.Errorf("header: column %d has no name", i+1)
		}
		if seen[name] {
			return nil, fmt.Errorf("header: column %q twice", name)
		}
		seen[name] = true
	}
	f := &Feed{Columns: header, policy: policy}
	for {
		row, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, describe(err)
		}
		if len(f.rows) == maxRows {
			return nil, fmt.Errorf("more than %d rows", maxRows)
		}
		f.rows = append(f.rows, row)
	}
	if len(f.rows) == 0 {
		return nil, errors.New("a header and no rows: want at least one row of data")
	}
	return f, nil
}

// describe turns the csv reader's error into "line N: what".
func describe(err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		if errors.Is(pe.Err, csv.ErrFieldCount) {
			return fmt.Errorf("line %d: a row with another number of fields than the header", pe.Line)
		}
		return fmt.Errorf("line %d: %v", pe.Line, pe.Err)
	}
	return err
}

func firstInvalid(data []byte) int {
	for i := 0; i < len(data); {
		r, n := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return len(data)
}

// Rows is how many rows the file holds.
func (f *Feed) Rows() int { return len(f.rows) }

// Column is the index of a column by name, for templates to resolve once.
func (f *Feed) Column(name string) (int, error) {
	for i, c := range f.Columns {
		if c == name {
			return i, nil
		}
	}
	return 0, fmt.Errorf("{{data.%s}}: %s has no column %q (it has %q)", name, f.Path, name, f.Columns)
}

// Widest is the width of column col's widest value, each measured by
// width (its length as sent, encoded), for a bound on what a request
// rendered from any row can take (HTTP/2's header list, checked once
// against the server's limit).
func (f *Feed) Widest(col int, width func(string) int) int {
	n := 0
	for _, row := range f.rows {
		n = max(n, width(row[col]))
	}
	return n
}

// FindAny is the first row (1 is the first after the header) whose value
// in column col holds any of the bytes in chars.
func (f *Feed) FindAny(col int, chars string) (row int, found bool) {
	for i, r := range f.rows {
		if strings.ContainsAny(r[col], chars) {
			return i + 1, true
		}
	}
	return 0, false
}

// Picker is one network thread's way of taking rows.
type Picker struct {
	f   *Feed
	rng *rand.Rand
}

// NewPicker is a picker for one thread (seed: its random stream).
func (f *Feed) NewPicker(seed uint64) *Picker {
	return &Picker{f: f, rng: rand.New(rand.NewPCG(seed, 0x6461746166656564))}
}

// Next is the row for the next request.
func (p *Picker) Next() ([]string, error) {
	f := p.f
	switch f.policy {
	case Random:
		return f.rows[p.rng.IntN(len(f.rows))], nil
	case Once:
		i := f.next.Add(1) - 1
		if i >= uint64(len(f.rows)) {
			return nil, ErrExhausted
		}
		return f.rows[i], nil
	}
	return f.rows[(f.next.Add(1)-1)%uint64(len(f.rows))], nil
}
