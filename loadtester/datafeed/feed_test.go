package datafeed

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func write(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "d.csv")
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadAndPolicies(t *testing.T) {
	p := write(t, "id,name\n1,a\n2,\"b, c\"\n3,d\n")
	f, err := Load(p, Loop)
	if err != nil {
		t.Fatal(err)
	}
	if f.Rows() != 3 || strings.Join(f.Columns, "|") != "id|name" {
		t.Fatalf("rows %d columns %v", f.Rows(), f.Columns)
	}
	if i, err := f.Column("name"); i != 1 || err != nil {
		t.Fatalf("Column(name) = %d, %v", i, err)
	}
	if _, err := f.Column("nope"); err == nil || !strings.Contains(err.Error(), "{{data.nope}}") {
		t.Fatalf("unknown column: %v", err)
	}
	pk := f.NewPicker(1)
	var got []string
	for range 5 {
		row, _ := pk.Next()
		got = append(got, row[0])
	}
	if strings.Join(got, "") != "12312" {
		t.Errorf("loop: %v", got)
	}
	once, _ := Load(p, Once)
	pk = once.NewPicker(1)
	for range 3 {
		if _, err := pk.Next(); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := pk.Next(); !errors.Is(err, ErrExhausted) {
		t.Errorf("once, a fourth row: %v", err)
	}
	random, _ := Load(p, Random)
	pk = random.NewPicker(7)
	seen := map[string]bool{}
	for range 200 {
		row, _ := pk.Next()
		seen[row[0]] = true
	}
	if len(seen) != 3 {
		t.Errorf("random over 200 picks saw %v", seen)
	}
}

// Under once, threads together take every row exactly once.
func TestOnceAcrossThreads(t *testing.T) {
	var b strings.Builder
	b.WriteString("n\n")
	const rows = 10000
	for i := range rows {
		b.WriteString(strings.Repeat("x", 1+i%7) + "\n") // (an empty line is no row in CSV)
	}
	f, err := Load(write(t, b.String()), Once)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	taken := 0
	var wg sync.WaitGroup
	for th := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pk := f.NewPicker(uint64(th))
			n := 0
			for {
				if _, err := pk.Next(); err != nil {
					break
				}
				n++
			}
			mu.Lock()
			taken += n
			mu.Unlock()
		}()
	}
	wg.Wait()
	if taken != rows {
		t.Errorf("%d rows taken, want %d", taken, rows)
	}
}

func TestBadDataFiles(t *testing.T) {
	for _, tc := range []struct{ content, want string }{
		{"", "empty"},
		{"id,name\n", "no rows"},
		{"id,name\n1,a\n2\n", "line 3: a row with another number of fields"},
		{"id,,x\n1,2,3\n", "column 2 has no name"},
		{"id,id\n1,2\n", `column "id" twice`},
		{"id\n\xff\xfe\n", "line 2: not UTF-8"},
		{"id\n\"open\n", "line"},
	} {
		_, err := Load(write(t, tc.content), Loop)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "--data ") {
			t.Errorf("%q: error %v, want one naming --data, the file and %q", tc.content, err, tc.want)
		}
	}
	if _, err := Load(filepath.Join(t.TempDir(), "missing.csv"), Loop); err == nil || !strings.HasPrefix(err.Error(), "--data: open ") {
		t.Errorf("missing file: %v", err)
	}
	if _, err := ParsePolicy("sometimes"); err == nil || !strings.Contains(err.Error(), "--data-policy") {
		t.Errorf("bad policy: %v", err)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"a,b\n1,2\n", "a\n\"x\"\"y\"\n", "a,b\n1\n", "\xff"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		feed, err := parse(data, Loop)
		if err != nil {
			return
		}
		row, err := feed.NewPicker(1).Next()
		if err != nil || len(row) != len(feed.Columns) {
			t.Fatalf("a loaded feed gave %v, %v", row, err)
		}
	})
}

func BenchmarkNext(b *testing.B) {
	f, _ := parse([]byte("id\n1\n2\n3\n"), Loop)
	pk := f.NewPicker(1)
	b.ReportAllocs()
	for b.Loop() {
		pk.Next()
	}
}

// A UTF-8 byte order mark, which spreadsheets put first when they export
// CSV, is skipped: it is not part of the first column's name.
func TestByteOrderMarkSkipped(t *testing.T) {
	f, err := parse([]byte("\xef\xbb\xbfid,name\n1,a\n"), Loop)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Column("id"); err != nil {
		t.Fatalf("columns %q: %v", f.Columns, err)
	}
}

// FindAny names the first row holding one of the bytes, 1-based.
func TestFindAny(t *testing.T) {
	f, _ := parse([]byte("a,b\nx,y\n\"p\nq\",z\n"), Loop)
	if row, ok := f.FindAny(0, "\r\n"); !ok || row != 2 {
		t.Fatalf("row %d, %v: want row 2", row, ok)
	}
	if _, ok := f.FindAny(1, "\r\n"); ok {
		t.Fatal("column b has no line break")
	}
}
