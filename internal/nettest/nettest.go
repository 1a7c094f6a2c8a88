// Package nettest has the dial the tests of servers use, and the kernel's
// network counters that explain a dial that did not complete.
//
// A loopback dial to a listening socket completes in the kernel, without
// the server's loops: the handshake needs no accept. When it still times
// out, the SYN or the SYN-ACK was lost, which on a small, loaded machine
// means the per-CPU backlog of the loopback device overflowed while its
// softirq work was starved (softnet_stat's drop count), or the listener's
// accept queue overflowed (ListenOverflows). The client retransmits a lost
// SYN after 1, 3, 7 and 15 s, so a dial timeout of 5 s fails a test on the
// second loss in a row. Dial waits long enough for three retransmissions
// and, when it fails anyway, says which counter moved.
package nettest

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// DialTimeout is long enough for three SYN retransmissions (1 + 2 + 4 s and
// some): a test dials to exercise a server, not the kernel's SYN handling.
const DialTimeout = 20 * time.Second

// Dial connects to addr ("tcp" or "unix") and fails the test, with the
// kernel's counters, when it cannot. The connection is closed at cleanup.
func Dial(t testing.TB, network, addr string) net.Conn {
	t.Helper()
	before := ReadCounters()
	start := time.Now()
	c, err := net.DialTimeout(network, addr, DialTimeout)
	if err != nil {
		t.Fatalf("dial %s %s after %v: %v\nkernel counters that moved meanwhile: %s",
			network, addr, time.Since(start).Round(time.Millisecond), err, ReadCounters().Delta(before))
	}
	if el := time.Since(start); el > time.Second {
		t.Logf("dial %s %s took %v (lost SYNs?): %s", network, addr, el.Round(time.Millisecond), ReadCounters().Delta(before))
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// Counters are the kernel's counts that explain a lost handshake.
type Counters map[string]int64

// ReadCounters reads TcpExt ListenOverflows, ListenDrops and TCPSynRetrans
// (/proc/net/netstat), Tcp RetransSegs (/proc/net/snmp) and the per-CPU
// backlog drops and squeezes of softnet_stat, summed. Missing files leave
// their counts out.
func ReadCounters() Counters {
	c := Counters{}
	readPairs(c, "/proc/net/netstat", "TcpExt:", "ListenOverflows", "ListenDrops", "TCPSynRetrans")
	readPairs(c, "/proc/net/snmp", "Tcp:", "RetransSegs", "AttemptFails")
	if f, err := os.Open("/proc/net/softnet_stat"); err == nil {
		defer f.Close()
		s := bufio.NewScanner(f)
		for s.Scan() {
			fields := strings.Fields(s.Text())
			if len(fields) >= 3 {
				drop, _ := strconv.ParseInt(fields[1], 16, 64)
				squeeze, _ := strconv.ParseInt(fields[2], 16, 64)
				c["softnet_dropped"] += drop
				c["softnet_time_squeeze"] += squeeze
			}
		}
	}
	return c
}

// readPairs reads the "Prefix: names" / "Prefix: values" line pairs of a
// /proc/net file and keeps the wanted names.
func readPairs(c Counters, path, prefix string, want ...string) {
	data, err := os.ReadFile(path)
	if err != nil {
		return
	}
	var header []string
	for _, line := range strings.Split(string(data), "\n") {
		if !strings.HasPrefix(line, prefix) {
			continue
		}
		fields := strings.Fields(line)[1:]
		if header == nil {
			header = fields
			continue
		}
		for i, name := range header {
			for _, w := range want {
				if name == w && i < len(fields) {
					v, _ := strconv.ParseInt(fields[i], 10, 64)
					c[name] = v
				}
			}
		}
		header = nil
	}
}

// Delta renders what moved since before, or says nothing did.
func (c Counters) Delta(before Counters) string {
	var parts []string
	for _, name := range []string{"ListenOverflows", "ListenDrops", "TCPSynRetrans", "RetransSegs", "AttemptFails", "softnet_dropped", "softnet_time_squeeze"} {
		v, ok := c[name]
		if !ok {
			continue
		}
		if d := v - before[name]; d != 0 {
			parts = append(parts, fmt.Sprintf("%s +%d", name, d))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}
