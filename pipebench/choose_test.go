package pipebench

import (
	"slices"
	"strings"
	"testing"
)

func TestParseFamilies(t *testing.T) {
	tests := []struct {
		in      string
		want    []string
		wantErr string
	}{
		{"batch", []string{"batch"}, ""},
		{" batch , latency ,", []string{"batch", "latency"}, ""},
		{strings.Join(DefaultFamilies(), ","), DefaultFamilies(), ""},
		{"", nil, "name at least one family"},
		{",,", nil, "name at least one family"},
		{"batch,nope", nil, `unknown family "nope"`},
	}
	for _, tt := range tests {
		got, err := ParseFamilies(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.HasPrefix(err.Error(), "--families") {
				t.Errorf("ParseFamilies(%q) = %v, %v; want an error naming --families and %q", tt.in, got, err, tt.wantErr)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("ParseFamilies(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
	if slices.Contains(DefaultFamilies(), FamilyLatency) || !slices.Contains(KnownFamilies(), FamilyLatency) {
		t.Error("latency runs only when named: known, not a default")
	}
}

func TestChooseCPUs(t *testing.T) {
	c, err := ChooseCPUs("", []string{FamilyBatch})
	if err != nil || len(c.CPUs) != 0 || c.Latency.Skip == "" {
		t.Errorf("unpinned: %+v, %v; want no CPUs and the latency family's dedicated cases skipped with a reason", c, err)
	}
	for _, spec := range []string{"x", "0", "0,99999,0"} {
		if _, err := ChooseCPUs(spec, []string{FamilyBatch}); err == nil || !strings.HasPrefix(err.Error(), "--cpus") {
			t.Errorf("--cpus %s: %v, want an error naming --cpus", spec, err)
		}
	}
	// The latency family alone pins nothing of the throughput families'.
	if c, err := ChooseCPUs("0,0", []string{FamilyLatency}); err != nil || len(c.CPUs) != 0 {
		t.Errorf("--cpus 0,0 for latency alone: %+v, %v", c, err)
	}
}
