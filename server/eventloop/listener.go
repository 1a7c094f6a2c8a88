package eventloop

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strconv"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// Listener is a non-blocking, close-on-exec listening socket: shared, which
// every loop accepts on (one loop woken per connection), or one loop's own (SO_REUSEPORT,
// ListenTCPReusePort). It is created outside the loops so that a bind error
// stops the start before any loop runs. Close may be called by the owning
// loop as it stops and by the Server after the loops: the first one closes.
type Listener struct {
	fd     int
	unix   bool
	path   string // unix socket path, removed by Close
	addr   string // for the startup line
	owner  int    // the loop that alone serves it, or -1: every loop
	closed atomic.Bool
}

// Owner is the loop that alone serves the listener, or -1 for a listener
// every loop shares.
func (l *Listener) Owner() int { return l.owner }

// Addr is the listener's address as "tcp 127.0.0.1:8080" or "unix /path".
func (l *Listener) Addr() string { return l.addr }

// Port is the bound TCP port (useful after binding port 0), or 0 for unix.
func (l *Listener) Port() int {
	if l.unix || l.closed.Load() {
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

// ListenTCP binds address:port (an IPv4 or IPv6 literal, an IPv6 literal
// with a zone such as fe80::1%eth0, or a host name that resolves) with
// SO_REUSEADDR and a 4096 backlog.
func ListenTCP(address string, port int) (*Listener, error) {
	return listenTCP(address, port, -1)
}

// ListenTCPReusePort binds address:port as ListenTCP does, with SO_REUSEPORT,
// as loop's own listener: bind one per loop to the same address and port
// (port 0: bind the first, then the others to its Port()) and the kernel
// spreads new connections over them by a hash of the connection's
// addresses, instead of waking whichever loop waits first.
func ListenTCPReusePort(address string, port, loop int) (*Listener, error) {
	if loop < 0 {
		return nil, fmt.Errorf("listen tcp %s: loop %d", net.JoinHostPort(address, strconv.Itoa(port)), loop)
	}
	return listenTCP(address, port, loop)
}

func listenTCP(address string, port, owner int) (*Listener, error) {
	where := net.JoinHostPort(address, strconv.Itoa(port))
	family, sa, err := tcpSockaddr(address, port)
	if err != nil {
		return nil, fmt.Errorf("listen tcp %s: %w", where, err)
	}
	fd, err := unix.Socket(family, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("listen tcp %s: socket: %w", where, err)
	}
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEADDR, 1); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("listen tcp %s: SO_REUSEADDR: %w", where, err)
	}
	if owner >= 0 {
		if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEPORT, 1); err != nil {
			unix.Close(fd)
			return nil, fmt.Errorf("listen tcp %s: SO_REUSEPORT: %w", where, err)
		}
	}
	if err := unix.Bind(fd, sa); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("listen tcp %s: bind: %w", where, err)
	}
	if err := unix.Listen(fd, 4096); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("listen tcp %s: listen: %w", where, err)
	}
	l := &Listener{fd: fd, owner: owner}
	l.addr = "tcp " + net.JoinHostPort(address, strconv.Itoa(l.Port()))
	return l, nil
}

// tcpSockaddr is the socket address of a literal or a name that resolves.
// An IPv6 zone (by interface name or index) becomes the scope id, without
// which the kernel refuses to bind a link-local address.
func tcpSockaddr(address string, port int) (family int, sa unix.Sockaddr, err error) {
	ip, err := netip.ParseAddr(address)
	if err != nil {
		ips, lerr := net.LookupIP(address)
		if lerr != nil || len(ips) == 0 {
			if lerr == nil {
				lerr = errors.New("no address found")
			}
			return 0, nil, fmt.Errorf("cannot resolve address: %w", lerr)
		}
		ip, _ = netip.AddrFromSlice(ips[0])
	}
	ip = ip.Unmap()
	if ip.Is4() {
		return unix.AF_INET, &unix.SockaddrInet4{Port: port, Addr: ip.As4()}, nil
	}
	a := &unix.SockaddrInet6{Port: port, Addr: ip.As16()}
	if zone := ip.Zone(); zone != "" {
		idx, err := zoneIndex(zone)
		if err != nil {
			return 0, nil, err
		}
		a.ZoneId = idx
	}
	return unix.AF_INET6, a, nil
}

// zoneIndex is the interface index of an IPv6 zone: a name, or a number.
func zoneIndex(zone string) (uint32, error) {
	if n, err := strconv.ParseUint(zone, 10, 32); err == nil {
		return uint32(n), nil
	}
	ifc, err := net.InterfaceByName(zone)
	if err != nil {
		return 0, fmt.Errorf("IPv6 zone %q: %w", zone, err)
	}
	return uint32(ifc.Index), nil
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
	return &Listener{fd: fd, unix: true, path: path, addr: "unix " + path, owner: -1}, nil
}

// Close closes the socket and removes a unix socket file. Call it only after
// every loop's backend has stopped accepting on the listener.
func (l *Listener) Close() error {
	if l.closed.Swap(true) {
		return nil
	}
	err := unix.Close(l.fd)
	if l.unix {
		if rerr := os.Remove(l.path); rerr != nil && !errors.Is(rerr, os.ErrNotExist) && err == nil {
			err = rerr
		}
	}
	return err
}
