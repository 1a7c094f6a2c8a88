package peertable

import (
	"strings"
	"testing"
)

func TestStraceTotal(t *testing.T) {
	for _, c := range []struct {
		name, in string
		want     float64
		err      string
	}{
		{"with errors", "% time     seconds  usecs/call     calls    errors syscall\n" +
			"------ ----------- ----------- --------- --------- ----------------\n" +
			" 60.00    0.001000           1      1000           writev\n" +
			"------ ----------- ----------- --------- --------- ----------------\n" +
			"100.00    0.002279          78      4012         1 total\n", 4012, ""},
		{"no errors column", "100.00    0.000100           0        29           total\n", 29, ""},
		{"no total", "nothing here\n", 0, "no total line"},
		{"garbage total", "100.00 0.1 0 many total\n", 0, "strace total line"},
	} {
		got, err := StraceTotal(strings.NewReader(c.in))
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: err = %v, want %q", c.name, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%s: %v, %v; want %v", c.name, got, err, c.want)
		}
	}
}
