package eventloop

import (
	"net"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"
)

// linkLocalZoned returns "fe80::...%iface" for an interface that holds an
// IPv6 link-local address, or "" when none does.
func linkLocalZoned(t *testing.T) string {
	t.Helper()
	ifaces, err := net.Interfaces()
	if err != nil {
		t.Fatal(err)
	}
	for _, ifc := range ifaces {
		if ifc.Flags&net.FlagUp == 0 {
			continue
		}
		addrs, _ := ifc.Addrs()
		for _, a := range addrs {
			if p, err := netip.ParsePrefix(a.String()); err == nil && p.Addr().Is6() && p.Addr().IsLinkLocalUnicast() {
				return p.Addr().WithZone(ifc.Name).String()
			}
		}
	}
	return ""
}

// A zoned IPv6 literal binds on its interface (the zone by name or by
// index); an unknown zone is refused with a reason naming it.
func TestListenTCPZonedIPv6(t *testing.T) {
	if _, err := net.Listen("tcp6", "[::1]:0"); err != nil {
		t.Skipf("no IPv6 loopback here: %v", err)
	}
	lo, err := net.InterfaceByName("lo")
	if err != nil {
		t.Skipf("no interface lo: %v", err)
	}
	addrs := []string{"::1%lo", "::1%" + strconv.Itoa(lo.Index)}
	if ll := linkLocalZoned(t); ll != "" {
		addrs = append(addrs, ll)
	} else {
		t.Log("no link-local IPv6 address here: the link-local case is not run")
	}
	for _, addr := range addrs {
		t.Run(addr, func(t *testing.T) {
			ln, err := ListenTCP(addr, 0)
			if err != nil {
				t.Fatalf("ListenTCP(%q): %v", addr, err)
			}
			defer ln.Close()
			if !strings.Contains(ln.Addr(), "%") {
				t.Errorf("Addr() = %q: the zone is lost", ln.Addr())
			}
			target := net.JoinHostPort(addr, strconv.Itoa(ln.Port()))
			c, err := net.DialTimeout("tcp", target, 5*time.Second)
			if err != nil {
				t.Fatalf("dial %s: %v", target, err)
			}
			c.Close()
		})
	}
	for _, bad := range []string{"fe80::1%no-such-interface", "::1%"} {
		if ln, err := ListenTCP(bad, 0); err == nil {
			ln.Close()
			t.Errorf("ListenTCP(%q) accepted", bad)
		} else if !strings.Contains(err.Error(), bad) {
			t.Errorf("ListenTCP(%q): %v (the error should name the address)", bad, err)
		}
	}
}
