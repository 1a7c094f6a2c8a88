package loadtester

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// HTTPS: crypto/tls over the engine's own sockets. A TLS connection is
// dialled and its handshake done, blocking, on a connect thread (timed, for
// the handshake histogram); its socket is then handed to a network thread
// like any other, and the loop reads and writes it through the tls.Conn,
// over an fdTransport that never blocks. Everything else (the rings of send
// times, the books, the window, the drain, the sweep, the open-loop pacer)
// is the plaintext path's: a TLS connection is a conn whose transport
// (protocol.go) is its tlsConn, chosen when its thread adopts it, so the
// plaintext path never asks whether a connection is TLS.
//
// Who owns what: a tlsConn and its transport belong to the connect thread
// that dials it until the handoff, then to the network thread that adopts
// it (its loop only). The tls.Config is built once before the run and
// shared read-only (its session cache is safe for concurrent use).

// TLSOptions are an https:// target's TLS settings (nil: plaintext).
type TLSOptions struct {
	Insecure   bool   `json:"insecure,omitempty"` // do not verify the server's certificate (--insecure)
	CAFile     string `json:"ca,omitempty"`       // PEM roots to verify it by instead of the system's (--ca)
	ServerName string `json:"sni,omitempty"`      // SNI and the name verified (--sni; default the host)
	CertFile   string `json:"cert,omitempty"`     // a client certificate (--cert) ...
	KeyFile    string `json:"key,omitempty"`      // ... and its key (--key)
	// Resume keeps a session cache, so new connections resume a session
	// (abbreviated handshakes); off, every connection does a full one.
	Resume bool `json:"resume"`
}

// alpnHTTP1 is what an HTTP/1.1 client offers by ALPN.
var alpnHTTP1 = []string{"http/1.1"}

// alpnH2 is what an HTTP/2 client offers: h2 alone, so that a server
// without it says so by choosing nothing.
var alpnH2 = []string{"h2"}

// tlsConfig builds the client's tls.Config from o: TLS 1.2 and 1.3, the
// roots of CAFile or the system's, a client certificate when given.
func (o *TLSOptions) tlsConfig(host string, http2 bool) (*tls.Config, error) {
	conf := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: o.Insecure, ServerName: o.ServerName,
		NextProtos: alpnHTTP1}
	if http2 {
		conf.NextProtos = alpnH2
	}
	if conf.ServerName == "" {
		conf.ServerName = host
	}
	if o.CAFile != "" {
		pem, err := os.ReadFile(o.CAFile)
		if err != nil {
			return nil, fmt.Errorf("--ca: %w", err)
		}
		conf.RootCAs = x509.NewCertPool()
		if !conf.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--ca %s: no PEM certificate in it", o.CAFile)
		}
	}
	if o.CertFile != "" || o.KeyFile != "" {
		if o.CertFile == "" || o.KeyFile == "" {
			return nil, errors.New("--cert and --key: give both")
		}
		cert, err := tls.LoadX509KeyPair(o.CertFile, o.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("--cert/--key: %w", err)
		}
		conf.Certificates = []tls.Certificate{cert}
	}
	if o.Resume {
		conf.ClientSessionCache = tls.NewLRUClientSessionCache(0)
	}
	return conf, nil
}

// tlsConn is a connection's TLS state on the loop.
type tlsConn struct {
	tc  *tls.Conn
	tr  *fdTransport
	ev  connEvents // the thread, told of a failed write (transports.choose)
	eof bool       // the tls.Conn returned data with io.EOF: the next read reports the end
	// cutShort: the stream ended without the server's close_notify (the
	// socket's end came first), so what it delimited may be cut short.
	cutShort bool
	broken   bool // a read failed in TLS itself, not in the socket (errTLS)
}

// errWouldBlock is what the transport returns when the socket has nothing
// to read: a temporary net.Error, which crypto/tls passes up without
// marking the connection broken, so the next read goes on where it stopped.
var errWouldBlock error = wouldBlock{}

type wouldBlock struct{}

func (wouldBlock) Error() string   { return "would block" }
func (wouldBlock) Timeout() bool   { return false }
func (wouldBlock) Temporary() bool { return true }

// fdTransport is the net.Conn under a tls.Conn: during the handshake the
// dialled net.Conn (blocking, with the connect timeout as deadline), after
// it the raw non-blocking socket, where a write the socket does not take
// whole keeps the rest for EPOLLOUT (a tls.Conn takes any write error as
// final, so it never sees EAGAIN) and a read returns errWouldBlock on
// EAGAIN.
type fdTransport struct {
	nc      net.Conn // during the handshake only
	fd      int
	eng     engine // after it: the thread's engine moves the bytes (transports.choose)
	c       *conn
	out     []byte // ciphertext the socket has not taken yet
	drained bool   // the last read was short: the socket is empty until the next edge
	closed  bool   // the peer's FIN is being read to the end: read on past a short read
	fin     bool   // a read found the socket's end
}

func (f *fdTransport) Read(p []byte) (int, error) {
	if f.nc != nil {
		return f.nc.Read(p)
	}
	if f.drained && !f.closed {
		return 0, errWouldBlock
	}
	n, _, errno := f.eng.read(f.c, p)
	switch {
	case errno == unix.EAGAIN:
		return 0, errWouldBlock
	case errno == unix.EINTR:
		return 0, errWouldBlock // the loop reads again on the next edge or turn
	case errno != 0:
		return 0, errno
	case n == 0:
		f.fin = true
		return 0, io.EOF
	}
	f.drained = n < len(p)
	return n, nil
}

func (f *fdTransport) Write(p []byte) (int, error) {
	if f.nc != nil {
		return f.nc.Write(p)
	}
	if len(f.out) > 0 {
		f.out = append(f.out, p...)
		return len(p), nil
	}
	n, errno := f.eng.write(f.c, p)
	switch {
	case errno == unix.EAGAIN || errno == unix.EINTR:
		n = 0
	case errno != 0:
		return 0, errno
	}
	if n < len(p) {
		f.out = append(f.out, p[n:]...)
	}
	return len(p), nil
}

// flush writes owed ciphertext (EPOLLOUT).
func (f *fdTransport) flush() unix.Errno {
	if len(f.out) == 0 {
		return 0
	}
	n, errno := f.eng.write(f.c, f.out)
	switch {
	case errno == unix.EAGAIN || errno == unix.EINTR:
		return 0
	case errno != 0:
		return errno
	}
	rest := copy(f.out, f.out[n:])
	f.out = f.out[:rest]
	return 0
}

func (f *fdTransport) Close() error {
	if f.nc != nil {
		return f.nc.Close()
	}
	return nil // the loop closes the fd with the conn
}

func (f *fdTransport) LocalAddr() net.Addr {
	if f.nc != nil {
		return f.nc.LocalAddr()
	}
	return nil
}

func (f *fdTransport) RemoteAddr() net.Addr {
	if f.nc != nil {
		return f.nc.RemoteAddr()
	}
	return nil
}

func (f *fdTransport) SetDeadline(d time.Time) error {
	if f.nc != nil {
		return f.nc.SetDeadline(d)
	}
	return nil
}

func (f *fdTransport) SetReadDeadline(d time.Time) error {
	if f.nc != nil {
		return f.nc.SetReadDeadline(d)
	}
	return nil
}

func (f *fdTransport) SetWriteDeadline(d time.Time) error {
	if f.nc != nil {
		return f.nc.SetWriteDeadline(d)
	}
	return nil
}

// tlsDialed is a connection a connect thread dialled and shook hands on.
type tlsDialed struct {
	fd        int
	conn      *tlsConn
	handshake time.Duration
	resumed   bool
}

// dialTLS dials the target, does the TLS handshake within the connect
// timeout, and detaches the socket from Go's poller (a duplicate of its
// descriptor, non-blocking) for a network thread's epoll loop.
func dialTLS(ctx context.Context, cfg *Config, conf *tls.Config) (tlsDialed, error) {
	network, address := cfg.dialTarget()
	deadline := time.Now().Add(cfg.ConnectTimeout)
	d := net.Dialer{Deadline: deadline}
	nc, err := d.DialContext(ctx, network, address)
	if err != nil {
		return tlsDialed{}, err
	}
	tr := &fdTransport{nc: nc, fd: -1}
	tc := tls.Client(tr, conf)
	nc.SetDeadline(deadline)
	start := time.Now()
	if err := tc.HandshakeContext(ctx); err != nil {
		nc.Close()
		return tlsDialed{}, &handshakeError{err}
	}
	hs := time.Since(start)
	if cfg.HTTP2 && tc.ConnectionState().NegotiatedProtocol != "h2" {
		nc.Close()
		return tlsDialed{}, &handshakeError{errors.New("the server did not choose h2 by ALPN")}
	}
	fd, err := detach(nc)
	nc.Close()
	if err != nil {
		return tlsDialed{}, err
	}
	tr.nc, tr.fd = nil, fd
	return tlsDialed{fd: fd, conn: &tlsConn{tc: tc, tr: tr}, handshake: hs, resumed: tc.ConnectionState().DidResume}, nil
}

// handshakeError marks a failed TLS handshake (errTLS), apart from a
// failed TCP connect.
type handshakeError struct{ err error }

func (e *handshakeError) Error() string { return "TLS handshake: " + e.err.Error() }
func (e *handshakeError) Unwrap() error { return e.err }

// detach duplicates nc's descriptor, non-blocking and close-on-exec, so nc
// can be closed without closing the socket.
func detach(nc net.Conn) (int, error) {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return -1, errors.New("not a socket")
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return -1, err
	}
	fd := -1
	var dupErr error
	if err := raw.Control(func(s uintptr) { fd, dupErr = unix.FcntlInt(s, unix.F_DUPFD_CLOEXEC, 0) }); err != nil {
		return -1, err
	}
	if dupErr != nil {
		return -1, fmt.Errorf("dup: %w", dupErr)
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("set non-blocking: %w", err)
	}
	return fd, nil
}

// read reads decrypted bytes into p, as rawRead reads plaintext: n > 0,
// or EAGAIN (nothing more until the next edge), or n == 0 and no errno at
// the end of the stream (c.cutShort says whether the server's close_notify
// ended it), or an errno (EIO for a TLS failure: tlsErr says so).
// peerClosed: the peer's FIN was seen, so read on to the end.
func (c *tlsConn) decrypt(p []byte, peerClosed bool) (n int, errno unix.Errno, tlsErr bool) {
	if c.eof {
		return 0, 0, false
	}
	c.tr.closed = peerClosed
	n, err := c.tc.Read(p)
	switch {
	case err == nil:
		return n, 0, false
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		// crypto/tls ends the stream with io.EOF both after a
		// close_notify and after a bare TCP close at a record boundary
		// (io.ErrUnexpectedEOF inside a record); only the transport
		// knows which came: its own read found the socket's end. A
		// close_notify is read from a record before the socket's end.
		c.cutShort = c.tr.fin || errors.Is(err, io.ErrUnexpectedEOF)
		if n > 0 {
			c.eof = true
			return n, 0, false
		}
		return 0, 0, false
	case err == errWouldBlock:
		c.tr.drained = false // the next edge reads the socket again
		if n > 0 {
			return n, 0, false
		}
		return 0, unix.EAGAIN, false
	}
	var en unix.Errno
	if errors.As(err, &en) {
		return 0, en, false
	}
	return 0, unix.EIO, true
}

// write encrypts p and sends it (what the socket does not take waits in the
// transport for EPOLLOUT).
func (c *tlsConn) encrypt(p []byte) (errno unix.Errno, tlsErr bool) {
	if _, err := c.tc.Write(p); err != nil {
		var en unix.Errno
		if errors.As(err, &en) {
			return en, false
		}
		return unix.EIO, true
	}
	return 0, false
}

// The transport (protocol.go) of a TLS connection.

// read decrypts into p; a TLS failure reads as EIO, which failure names.
func (c *tlsConn) read(cn *conn, p []byte) (int, int64, unix.Errno) {
	n, errno, tlsErr := c.decrypt(p, cn.peerClosed)
	if tlsErr {
		c.broken = true
	}
	return n, 0, errno
}

// shortReadDrains: no, a read returns one record; the loop reads on until
// the transport finds the socket empty (EAGAIN).
func (c *tlsConn) shortReadDrains() bool { return false }

func (c *tlsConn) failure(errno unix.Errno) errorKind {
	if c.broken {
		return errTLS
	}
	return errnoKind(errno)
}

// buffered: the handshake may have read past its end.
func (c *tlsConn) buffered() bool { return true }

// cut reports a stream that ended without the server's close_notify.
func (c *tlsConn) cut() bool { return c.cutShort }

// owes reports ciphertext waiting for the socket.
func (c *tlsConn) owes() bool { return len(c.tr.out) > 0 }

// write encrypts out and sends it.
func (c *tlsConn) write(cn *conn, out []byte) {
	if kind, failed := encryptFailure(c.encrypt(out)); failed {
		c.ev.writeFailed(cn, kind)
	}
}

// flush encrypts the requests the open loop queued in cn.pending, then
// writes what ciphertext the socket will take.
func (c *tlsConn) flush(cn *conn) {
	if len(cn.pending) > 0 {
		kind, failed := encryptFailure(c.encrypt(cn.pending))
		cn.pending = cn.pending[:0]
		if failed {
			c.ev.writeFailed(cn, kind)
			return
		}
	}
	if errno := c.tr.flush(); errno != 0 {
		c.ev.writeFailed(cn, errnoKind(errno))
	}
}

// encryptFailure is the kind of an encrypt's failure, if it failed.
func encryptFailure(errno unix.Errno, tlsErr bool) (errorKind, bool) {
	switch {
	case tlsErr:
		return errTLS, true
	case errno != 0:
		return errnoKind(errno), true
	}
	return 0, false
}
