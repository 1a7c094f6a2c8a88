package loadtester

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"
	"weaseldb/loadtester/result"

	"golang.org/x/net/http2"
)

// The https preflight: before any load, one connection does a full
// handshake and, where a refusal shows only after it, a first read, so a
// certificate either side refuses fails the run in one line that says
// what to do. Under TLS 1.3 a server that rejects the client's
// certificate (or its absence) says so with an alert after the client's
// handshake is over: the client learns it on its first read, and without
// that read the run would start and reconnect against a server that
// refuses every connection. Under TLS 1.2 the refusal ends the handshake,
// often as a bare handshake_failure; the client saw the server's
// certificate request (tls.Config.GetClientCertificate), so it names it
// the same way. Everything here runs on Run's goroutine, before any
// thread starts.

// tlsPreflight is preflight for an https target: it reports what the
// connection negotiated, or one line naming why the target refuses it;
// h2req is the HTTP/2 request (nil for HTTP/1.1).
func tlsPreflight(cfg *Config, conf *tls.Config, h2req *h2Request) (*result.TLSInfo, error) {
	network, address := cfg.dialTarget()
	d := net.Dialer{Timeout: cfg.ConnectTimeout}
	nc, err := d.Dial(network, address)
	if err != nil {
		var op *net.OpError
		if errors.As(err, &op) && op.Err != nil {
			err = op.Err
		}
		return nil, fmt.Errorf("cannot connect to %s %s: %w", network, address, err)
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(cfg.ConnectTimeout))
	probe := conf.Clone()
	probe.ClientSessionCache = nil // the run's first connection is not resumed from the probe's
	var cc clientCertProbe
	probe.GetClientCertificate = cc.choose(conf.Certificates)
	tc := tls.Client(nc, probe)
	if err := tc.Handshake(); err != nil {
		return nil, preflightError(cfg, network, address, probe.ServerName, &cc, err)
	}
	st := tc.ConnectionState()
	if cfg.HTTP2 && st.NegotiatedProtocol != "h2" {
		return nil, fmt.Errorf("%s %s does not offer HTTP/2: ALPN offered h2, the server chose %q", network, address, st.NegotiatedProtocol)
	}
	if err := firstRead(cfg, tc, st.Version, cc.asked, h2req); err != nil {
		if cc.certRefusal(err) == "" {
			return nil, fmt.Errorf("%s %s: %w", network, address, err)
		}
		return nil, preflightError(cfg, network, address, probe.ServerName, &cc, err)
	}
	return &result.TLSInfo{Version: tls.VersionName(st.Version), Cipher: tls.CipherSuiteName(st.CipherSuite), ALPN: st.NegotiatedProtocol}, nil
}

// clientCertProbe watches the handshake for the server's certificate
// request and what the client answered.
type clientCertProbe struct {
	had   bool // --cert gave the client a certificate
	asked bool // the server sent a CertificateRequest
	sent  bool // the client answered it with a certificate
}

// choose is the probe's GetClientCertificate: crypto/tls's own choice
// (the first of certs the request accepts, else none), noted.
func (p *clientCertProbe) choose(certs []tls.Certificate) func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
	p.had = len(certs) > 0
	return func(cri *tls.CertificateRequestInfo) (*tls.Certificate, error) {
		p.asked = true
		for i := range certs {
			if cri.SupportsCertificate(&certs[i]) == nil {
				p.sent = true
				return &certs[i], nil
			}
		}
		return &tls.Certificate{}, nil
	}
}

// firstRead reads past the handshake where a refusal can still come: for
// HTTP/2, until the server's SETTINGS (which it owes the preface in any
// case); for HTTP/1.1 under TLS 1.3, when the server asked for a
// certificate, the first bytes of the answer to `OPTIONS *` (a request
// with no effect on any resource), or the alert that refuses the
// certificate. An HTTP/1.1 server that says nothing within the connect
// timeout, or closes, passes: only an alert is a refusal. Write errors
// are left to the read: a server that refused the certificate may have
// closed before the request arrived (a reset), and its alert, sent
// before, still waits to be read.
func firstRead(cfg *Config, tc *tls.Conn, version uint16, asked bool, h2req *h2Request) error {
	if cfg.HTTP2 {
		return readSettings(tc, h2req)
	}
	if version < tls.VersionTLS13 || !asked { // a TLS 1.2 refusal ends the handshake
		return nil
	}
	fmt.Fprintf(tc, "OPTIONS * HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", cfg.hostHeader())
	var b [1]byte
	_, err := tc.Read(b[:])
	return remoteAlertOnly(err)
}

// readSettings sends the HTTP/2 preface and reads frames until the
// server's SETTINGS (write errors left to the read, as in firstRead),
// which must allow req.
func readSettings(tc *tls.Conn, req *h2Request) error {
	tc.Write([]byte(http2.ClientPreface))
	fr := http2.NewFramer(tc, tc)
	fr.WriteSettings()
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			if _, alert := remoteAlert(err); alert {
				return err
			}
			return fmt.Errorf("the server chose h2 by ALPN but sent no SETTINGS frame after the client's preface (%w)", err)
		}
		if sf, ok := f.(*http2.SettingsFrame); ok && !sf.IsAck() {
			return h2SettingsAllow(sf, req)
		}
	}
}

// remoteAlertOnly keeps err if it is the server's alert, else nil.
func remoteAlertOnly(err error) error {
	if _, alert := remoteAlert(err); alert {
		return err
	}
	return nil
}

// remoteAlert reports the alert the server sent, if err is one:
// crypto/tls reports it as a *net.OpError "remote error" around its own
// alert type, whose text is tls.AlertError's for the same code.
func remoteAlert(err error) (tls.AlertError, bool) {
	var op *net.OpError
	if !errors.As(err, &op) || op.Op != "remote error" || op.Err == nil {
		return 0, false
	}
	text := op.Err.Error()
	for code := range 256 {
		if a := tls.AlertError(code); a.Error() == text {
			return a, true
		}
	}
	return 0, false
}

// alertCertificateRequired is TLS 1.3's certificate_required (RFC 8446).
const alertCertificateRequired tls.AlertError = 116

// certAlerts are the alerts by which servers refuse a client certificate
// or its absence: certificate_required, the certificate alerts, and the
// handshake_failure that nginx and others send under TLS 1.2 (RFC 5246
// §7.4.6 lets a server that requires a certificate end the handshake with
// it; a cipher or version mismatch fails before the server could ask).
var certAlerts = map[tls.AlertError]bool{
	40:  true, // handshake_failure
	42:  true, // bad_certificate
	43:  true, // unsupported_certificate
	44:  true, // certificate_revoked
	45:  true, // certificate_expired
	46:  true, // certificate_unknown
	48:  true, // unknown_ca
	49:  true, // access_denied
	116: true, // certificate_required (alertCertificateRequired)
}

// certRefusal names a refused client certificate from the alert err
// carries and what the handshake showed; "" when err is something else.
func (p *clientCertProbe) certRefusal(err error) string {
	a, ok := remoteAlert(err)
	switch {
	case !ok || !certAlerts[a] || !p.asked && a != alertCertificateRequired:
		return ""
	case p.sent:
		return "the server rejected the client certificate given by --cert"
	case p.had:
		return "the server requires a client certificate and the one given by --cert is not one it asks for (another issuer or key type)"
	}
	return "the server requires a client certificate and none was given"
}

// preflightError is the one line for a failed preflight: a refused
// client certificate with the flags that give one, a server certificate
// the client refuses with the flags that change the check, a server
// without HTTP/2, or the error as it came.
func preflightError(cfg *Config, network, address, serverName string, cc *clientCertProbe, err error) error {
	if why := cc.certRefusal(err); why != "" {
		fix := "--cert FILE --key FILE give one"
		if cc.had {
			fix = "--cert FILE --key FILE give another"
		}
		return fmt.Errorf("TLS handshake with %s %s (server name %q): %s (%w); %s", network, address, serverName, why, err, fix)
	}
	if cfg.HTTP2 && strings.Contains(err.Error(), "no application protocol") {
		return fmt.Errorf("%s %s does not offer HTTP/2: ALPN offered h2 and the server refused it (%w)", network, address, err)
	}
	hint := ""
	var verr *tls.CertificateVerificationError
	if errors.As(err, &verr) {
		hint = " (--ca FILE verifies by another issuer, --sni NAME checks another name, --insecure skips the check)"
	}
	return fmt.Errorf("TLS handshake with %s %s (server name %q): %w%s", network, address, serverName, err, hint)
}
