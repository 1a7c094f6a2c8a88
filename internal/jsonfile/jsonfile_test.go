package jsonfile

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

type doc struct {
	A int      `json:"a"`
	B []string `json:"b"`
}

const want = "{\n  \"a\": 1,\n  \"b\": [\n    \"x\"\n  ]\n}\n"

func TestWriters(t *testing.T) {
	v := doc{A: 1, B: []string{"x"}}
	dir := t.TempDir()
	var buf bytes.Buffer
	for _, tc := range []struct {
		name  string
		write func() error
		read  func() (string, error)
	}{
		{"Marshal", func() error { return nil }, func() (string, error) { b, err := Marshal(v); return string(b), err }},
		{"Write", func() error { return Write(&buf, v) }, func() (string, error) { return buf.String(), nil }},
		{"WriteFile", func() error { return WriteFile(filepath.Join(dir, "f.json"), v) }, readFile(filepath.Join(dir, "f.json"))},
		{"WriteFileAtomic", func() error { return WriteFileAtomic(filepath.Join(dir, "a.json"), v) }, readFile(filepath.Join(dir, "a.json"))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.write(); err != nil {
				t.Fatal(err)
			}
			got, err := tc.read()
			if err != nil || got != want {
				t.Errorf("got %q, %v; want %q", got, err, want)
			}
		})
	}
	for _, name := range []string{"f.json", "a.json"} {
		if fi, err := os.Stat(filepath.Join(dir, name)); err != nil || fi.Mode().Perm() != 0o644 {
			t.Errorf("%s: %v %v, want mode 0644", name, fi.Mode(), err)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Errorf("left behind: %v", entries)
	}
}

// A value JSON cannot hold is an error, and no file is written (or the old
// one is kept).
func TestUnencodable(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "x.json")
	if err := WriteFile(path, math.NaN()); err == nil || !strings.Contains(err.Error(), "encode JSON") {
		t.Errorf("WriteFile(NaN) = %v", err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a file was written: %v", err)
	}
	if err := WriteFileAtomic(path, doc{A: 1}); err != nil {
		t.Fatal(err)
	}
	if err := WriteFileAtomic(path, math.Inf(1)); err == nil {
		t.Error("WriteFileAtomic(Inf) did not fail")
	}
	if b, _ := os.ReadFile(path); !strings.Contains(string(b), `"a": 1`) {
		t.Errorf("the old document was not kept: %q", b)
	}
	if err := WriteFile(filepath.Join(dir, "no", "such", "dir.json"), 1); err == nil || !strings.Contains(err.Error(), "dir.json") {
		t.Errorf("an unwritable path: %v, want an error naming it", err)
	}
	if err := WriteFileAtomic(filepath.Join(dir, "no", "such", "dir.json"), 1); err == nil {
		t.Error("WriteFileAtomic to a missing directory did not fail")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("left behind: %v", entries)
	}
}

func readFile(path string) func() (string, error) {
	return func() (string, error) { b, err := os.ReadFile(path); return string(b), err }
}
