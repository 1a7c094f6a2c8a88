package nettest

import (
	"net"
	"testing"
)

func TestDialAndCounters(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c := Dial(t, "tcp", ln.Addr().String())
	if c == nil {
		t.Fatal("no connection")
	}
	got := ReadCounters()
	if _, ok := got["ListenOverflows"]; !ok {
		t.Skip("no /proc/net/netstat here")
	}
	if d := got.Delta(got); d != "none" {
		t.Fatalf("delta of a reading with itself: %q", d)
	}
	before := Counters{}
	for k, v := range got {
		before[k] = v
	}
	before["ListenOverflows"] -= 2
	if d := got.Delta(before); d != "ListenOverflows +2" {
		t.Fatalf("delta %q", d)
	}
}
