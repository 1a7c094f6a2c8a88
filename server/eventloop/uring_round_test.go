package eventloop

import (
	"bufio"
	"fmt"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"weaseldb/internal/nettest"
)

// An io_uring loop with the completion peek, a round budget of one
// completion, or both, serves every connection: a turn cut short by the
// budget takes the rest next turn without blocking on them.
func TestUringPeekAndRoundBudgetServe(t *testing.T) {
	if err := ProbeIOUring(); err != nil {
		t.Skipf("io_uring unavailable: %v", err)
	}
	for _, tc := range []struct {
		name   string
		peek   time.Duration
		budget int
	}{
		{"peek", 20 * time.Microsecond, 0},
		{"budget 1", 0, 1},
		{"peek and budget 3", 5 * time.Microsecond, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, addr := startLineServer(t, 1, 1, true, Options{Backend: BackendIOUring, UringPeek: tc.peek, UringRoundBudget: tc.budget})
			const conns, lines = 40, 5
			var wg sync.WaitGroup
			errs := make(chan error, conns)
			for i := range conns {
				wg.Add(1)
				go func() {
					defer wg.Done()
					c, err := net.DialTimeout("tcp", addr, nettest.DialTimeout)
					if err != nil {
						errs <- err
						return
					}
					defer c.Close()
					c.SetDeadline(time.Now().Add(30 * time.Second))
					br := bufio.NewReader(c)
					for k := range lines {
						want := strconv.Itoa(i*lines+k) + "\n"
						c.Write([]byte(want))
						if got, err := br.ReadString('\n'); err != nil || got != want {
							errs <- fmt.Errorf("conn %d line %d: %q %v", i, k, got, err)
							return
						}
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
		})
	}
}
