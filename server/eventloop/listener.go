package eventloop

import (
	"errors"
	"fmt"
	"net"
	"os"

	"golang.org/x/sys/unix"
)

// Listener is a non-blocking, close-on-exec listening socket that every loop
// registers with EPOLLEXCLUSIVE. It is created outside the loops so that a
// bind error stops the start before any loop runs.
type Listener struct {
	fd   int
	unix bool
	path string // unix socket path, removed by Close
	addr string // for the startup line
}

// Addr is the listener's address as "tcp 127.0.0.1:8080" or "unix /path".
func (l *Listener) Addr() string { return l.addr }

// Port is the bound TCP port (useful after binding port 0), or 0 for unix.
func (l *Listener) Port() int {
	if l.unix {
		return 0
	}
	sa, err := unix.Getsockname(l.fd)
	if err != nil {
		return 0
	}
	switch a := sa.(type) {
	case *unix.SockaddrInet4:
		return a.Port
	case *unix.SockaddrInet6:
		return a.Port
	}
	return 0
}

// ListenTCP binds address:port (IPv4 or IPv6 literal, or a host name that
// resolves) with SO_REUSEADDR and a 4096 backlog.
func ListenTCP(address string, port int) (*Listener, error) {
	ip := net.ParseIP(address)
	if ip == nil {
		ips, err := net.LookupIP(address)
		if err != nil || len(ips) == 0 {
			if err == nil {
				err = errors.New("no address found")
			}
			return nil, fmt.Errorf("listen tcp %s:%d: cannot resolve address: %w", address, port, err)
		}
		ip = ips[0]
	}
	family := unix.AF_INET
	var sa unix.Sockaddr
	if ip4 := ip.To4(); ip4 != nil {
		a := &unix.SockaddrInet4{Port: port}
		copy(a.Addr[:], ip4)
		sa = a
	} else {
		family = unix.AF_INET6
		a := &unix.SockaddrInet6{Port: port}
		copy(a.Addr[:], ip.To16())
		sa = a
	}
	fd, err := unix.Socket(family, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("listen tcp %s:%d: socket: %w", address, port, err)
	}
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEADDR, 1); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("listen tcp %s:%d: SO_REUSEADDR: %w", address, port, err)
	}
	if err := unix.Bind(fd, sa); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("listen tcp %s:%d: bind: %w", address, port, err)
	}
	if err := unix.Listen(fd, 4096); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("listen tcp %s:%d: listen: %w", address, port, err)
	}
	l := &Listener{fd: fd}
	l.addr = fmt.Sprintf("tcp %s", net.JoinHostPort(address, fmt.Sprint(l.Port())))
	return l, nil
}

// ListenUnix binds a unix stream socket at path, removing a stale socket file
// first (but refusing to remove anything that is not a socket).
func ListenUnix(path string) (*Listener, error) {
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode()&os.ModeSocket == 0 {
			return nil, fmt.Errorf("listen unix %s: path exists and is not a socket", path)
		}
		if err := os.Remove(path); err != nil {
			return nil, fmt.Errorf("listen unix %s: remove stale socket: %w", path, err)
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("listen unix %s: %w", path, err)
	}
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("listen unix %s: socket: %w", path, err)
	}
	if err := unix.Bind(fd, &unix.SockaddrUnix{Name: path}); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("listen unix %s: bind: %w", path, err)
	}
	if err := unix.Listen(fd, 4096); err != nil {
		unix.Close(fd)
		os.Remove(path)
		return nil, fmt.Errorf("listen unix %s: listen: %w", path, err)
	}
	return &Listener{fd: fd, unix: true, path: path, addr: "unix " + path}, nil
}

// Close closes the socket and removes a unix socket file. Call it only after
// every loop has removed the listener from its epoll set.
func (l *Listener) Close() error {
	if l.fd < 0 {
		return nil
	}
	err := unix.Close(l.fd)
	l.fd = -1
	if l.unix {
		if rerr := os.Remove(l.path); rerr != nil && !errors.Is(rerr, os.ErrNotExist) && err == nil {
			err = rerr
		}
	}
	return err
}
