package bench

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	"weaseldb/artifacts"
)

// idleCPU opens conns keep-alive connections (one request each, so each is
// a live connection the server has served), waits a second for the
// strategy's spins to expire, and samples the server's CPU over window
// (atStart and atEnd, when set, run as it opens and once it closed). note
// says how many connections could not be opened, if any.
func idleCPU(ctx context.Context, pid int, socket string, conns int, window time.Duration, atStart, atEnd func()) (idle *artifacts.CPUSample, note string, err error) {
	var open []net.Conn
	defer func() {
		for _, c := range open {
			c.Close()
		}
	}()
	for i := 0; i < conns; i++ {
		c, err := net.DialTimeout("unix", socket, 2*time.Second)
		if err != nil {
			note = fmt.Sprintf("idle: %d of %d keep-alive connections opened (%v)", i, conns, err)
			break
		}
		open = append(open, c)
		if err := okRoundTrip(c); err != nil {
			note = fmt.Sprintf("idle: connection %d: %v", i, err)
			break
		}
	}
	idle, err = SampleCPU(ctx, SampleOptions{Pid: pid, Phase: "idle", Delay: time.Second, Window: window,
		AtStart: atStart, AtEnd: atEnd})
	return idle, note, err
}

// okRoundTrip sends GET /ok and reads until the response's headers end (the
// body is short and arrives with them).
func okRoundTrip(c net.Conn) error {
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(c, "GET /ok HTTP/1.1\r\nHost: localhost\r\n\r\n"); err != nil {
		return err
	}
	br := bufio.NewReader(c)
	status, err := br.ReadString('\n')
	if err != nil {
		return err
	}
	if !strings.HasPrefix(status, "HTTP/1.1 200") {
		return fmt.Errorf("GET /ok answered %q", strings.TrimSpace(status))
	}
	return c.SetDeadline(time.Time{})
}
