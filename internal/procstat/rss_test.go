package procstat

import (
	"os"
	"testing"
)

// Our own resident memory is more than nothing; a process that is not
// there is an error naming its file.
func TestPidRSS(t *testing.T) {
	rss, err := PidRSS(os.Getpid())
	if err != nil || rss <= 0 {
		t.Fatalf("PidRSS(self) = %d, %v; want > 0", rss, err)
	}
	if _, err := PidRSS(1 << 30); err == nil {
		t.Fatal("PidRSS of a missing pid: no error")
	}
}
