package arrival

import (
	"testing"
	"time"
)

// A stage's duration takes plain seconds as every other time of the
// command line does (--duration 10, --warmup 0.5), or a Go duration.
func TestStageDurationInSeconds(t *testing.T) {
	stages, err := ParseStages("1:100,0.5:0,2s:50")
	if err != nil {
		t.Fatal(err)
	}
	want := []time.Duration{time.Second, 500 * time.Millisecond, 2 * time.Second}
	for i, st := range stages {
		if st.Duration != want[i] {
			t.Errorf("stage %d: %v, want %v", i+1, st.Duration, want[i])
		}
	}
	for _, bad := range []string{"0:100", "-1:100", "NaN:1", "Inf:1", "x:1"} {
		if _, err := ParseStages(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
