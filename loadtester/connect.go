package loadtester

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// Connect threads (goroutines, ConnectThreads of them) share only the
// runner's connReqs channel, which any goroutine sends to (a network
// thread, or the timer of a slot backing off) and they receive from, and
// each network thread's inbox (handOff), which they fill under its lock. A
// socket is theirs until handed off, then its network thread's. A slot
// backing off is its timer's until the timer queues it.

// connRequest asks the connect threads for connection number slot.
type connRequest struct {
	slot     int
	failures int           // consecutive failures of this slot: the back-off grows with it
	backoff  time.Duration // how long the slot backed off before this request (0: none)
}

// requestConn queues a (re)connection of slot once its back-off (after
// failures consecutive failures) has passed. Each waiting slot has its own
// timer, so slots back off independently and no connect thread sleeps
// while other slots wait for it. The channel holds one entry per
// connection slot and a slot is in at most one place at a time, so the
// send never blocks.
func (r *runner) requestConn(slot, failures int) {
	d := jittered(backoff(failures))
	if d == 0 {
		r.queueConn(connRequest{slot: slot, failures: failures})
		return
	}
	queue := func() { r.queueConn(connRequest{slot: slot, failures: failures, backoff: d}) }
	if r.afterBackoff != nil {
		r.afterBackoff(d, queue)
		return
	}
	time.AfterFunc(d, queue)
}

func (r *runner) queueConn(req connRequest) {
	select {
	case r.connReqs <- req:
	default: // unreachable by construction; dropping beats blocking a loop
	}
}

// Back-off bounds: the first retry of a failing slot waits about
// backoffFirst, each further one twice as long, up to backoffCap.
const (
	backoffFirst = 5 * time.Millisecond
	backoffCap   = time.Second
)

// backoff spaces retries of a failing slot: 5 ms doubling up to 1 s, so a
// dead server, or one that refuses every handshake, is not hammered (a
// slot makes about one attempt a second once capped) and a restarted one
// is found quickly.
func backoff(failures int) time.Duration {
	if failures <= 0 {
		return 0
	}
	d := backoffFirst << min(failures-1, 8)
	return min(d, backoffCap)
}

// jittered draws a wait in [d/2, d], so slots that failed together (a
// server restart) do not retry in lockstep; the lower half bounds how
// often a slot can retry.
func jittered(d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	return d/2 + rand.N(d-d/2+1)
}

// connectLoop is one connect thread: it opens non-blocking sockets and hands
// them to the network thread that owns the slot.
func (r *runner) connectLoop(ctx context.Context) {
	sa := copySockaddr(r.sockaddr) // Connect writes into it: one per thread
	for {
		select {
		case <-ctx.Done():
			return
		case req := <-r.connReqs:
			t := r.threads[req.slot%len(r.threads)]
			var h handoff
			if r.tlsConf != nil {
				d, err := dialTLS(ctx, &r.cfg, r.tlsConf)
				h = handoff{fd: d.fd, connSlot: req.slot, failures: req.failures, backoff: req.backoff, err: err,
					tls: d.conn, handshake: d.handshake, resumed: d.resumed}
			} else {
				fd, err := r.dial(ctx, sa)
				h = handoff{fd: fd, connSlot: req.slot, failures: req.failures, backoff: req.backoff, err: err}
			}
			if !t.handOff(h) && h.err == nil {
				unix.Close(h.fd)
			}
		}
	}
}

// dial starts a connection. TCP connects are non-blocking (completion shows
// as EPOLLOUT); a unix-socket connect completes at once or reports EAGAIN
// when the listener's backlog is full, retried here until the connect
// timeout.
func (r *runner) dial(ctx context.Context, sa unix.Sockaddr) (fd int, err error) {
	fd, err = unix.Socket(r.family, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("socket: %w", err)
	}
	if r.family != unix.AF_UNIX {
		unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
	}
	deadline := time.Now().Add(r.cfg.ConnectTimeout)
	for {
		err = unix.Connect(fd, sa)
		switch {
		case err == nil:
			return fd, nil
		case errors.Is(err, unix.EINPROGRESS):
			return fd, nil // EPOLLOUT reports completion
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.EAGAIN) && r.family == unix.AF_UNIX:
			if time.Now().After(deadline) || ctx.Err() != nil {
				unix.Close(fd)
				return -1, unix.ETIMEDOUT
			}
			time.Sleep(time.Millisecond)
			continue
		}
		unix.Close(fd)
		return -1, err
	}
}

// connectErrorKind classifies a failed connect.
func connectErrorKind(err error) errorKind {
	var hs *handshakeError
	switch {
	case errors.As(err, &hs):
		return errTLS
	case errors.Is(err, unix.ECONNREFUSED), errors.Is(err, unix.ENOENT):
		return errConnectRefused
	case errors.Is(err, unix.ETIMEDOUT), errors.Is(err, os.ErrDeadlineExceeded):
		return errConnectTimeout
	}
	return errConnect
}

// resolve turns the target into a socket address once, before the run.
func resolve(cfg *Config) (int, unix.Sockaddr, error) {
	if cfg.UnixSocket != "" {
		return unix.AF_UNIX, &unix.SockaddrUnix{Name: cfg.UnixSocket}, nil
	}
	addr, err := net.ResolveTCPAddr("tcp", net.JoinHostPort(cfg.Host, fmt.Sprint(cfg.Port)))
	if err != nil {
		return 0, nil, fmt.Errorf("resolve %s: %w", cfg.Host, err)
	}
	if ip4 := addr.IP.To4(); ip4 != nil {
		sa := &unix.SockaddrInet4{Port: addr.Port}
		copy(sa.Addr[:], ip4)
		return unix.AF_INET, sa, nil
	}
	sa := &unix.SockaddrInet6{Port: addr.Port}
	copy(sa.Addr[:], addr.IP.To16())
	return unix.AF_INET6, sa, nil
}

// preflight makes one blocking connection so a target that is down or
// refusing fails the run with one line, within the connect timeout.
func preflight(cfg *Config) error {
	network, address := cfg.dialTarget()
	c, err := net.DialTimeout(network, address, cfg.ConnectTimeout)
	if err != nil {
		var op *net.OpError
		if errors.As(err, &op) && op.Err != nil {
			err = op.Err
		}
		return fmt.Errorf("cannot connect to %s %s: %w", network, address, err)
	}
	return c.Close()
}

// copySockaddr copies one of the address types resolve returns.
func copySockaddr(sa unix.Sockaddr) unix.Sockaddr {
	switch a := sa.(type) {
	case *unix.SockaddrInet4:
		return &unix.SockaddrInet4{Port: a.Port, Addr: a.Addr}
	case *unix.SockaddrInet6:
		return &unix.SockaddrInet6{Port: a.Port, ZoneId: a.ZoneId, Addr: a.Addr}
	case *unix.SockaddrUnix:
		return &unix.SockaddrUnix{Name: a.Name}
	}
	return sa
}

func wrapErr(op string, err error) error { return fmt.Errorf("%s: %w", op, err) }
