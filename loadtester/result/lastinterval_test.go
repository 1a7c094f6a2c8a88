package result

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// A run's short last interval says "last", an interrupted run's
// "partial": a 10.4 s run's last 0.4 s is no interrupt.
func TestShortIntervalTags(t *testing.T) {
	iv := Interval{TS: 10.4, LengthS: 0.4}
	for _, tc := range []struct {
		print func(*bytes.Buffer)
		want  string
	}{
		{func(b *bytes.Buffer) { PrintLastInterval(b, iv, time.Second) }, "(last, 400"},
		{func(b *bytes.Buffer) { PrintInterval(b, iv, false, time.Second) }, "(partial: 400"},
	} {
		var b bytes.Buffer
		tc.print(&b)
		if !strings.Contains(b.String(), tc.want) {
			t.Errorf("%q: want %q", b.String(), tc.want)
		}
	}
}
