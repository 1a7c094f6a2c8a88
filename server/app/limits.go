package app

import (
	"fmt"
	"time"

	"golang.org/x/sys/unix"

	"weaseldb/server/config"
	"weaseldb/server/eventloop"
)

// loopOptions are the event loops' options: opt.Loop (tests, benchmarks)
// with the config's event batch size, read buffer size and I/O CPUs laid
// over it, and its timeouts where opt.Loop left them zero.
func loopOptions(cfg config.Config, opt Options) eventloop.Options {
	lo := opt.Loop
	lo.EventBatchSize = cfg.Server.EventBatchSize
	lo.ReadBufferSize = cfg.Server.ReadBufferSize
	lo.IOCPUs = cfg.Server.IOCPUs
	lo.UringPeek = time.Duration(cfg.Server.IOUringPeekNs)
	lo.UringRoundBudget = cfg.Server.IOUringRoundBudget
	lo.LockThreads = cfg.Server.ThreadNames.LockAll()
	lo.Unnamed = cfg.Server.ThreadNames.Unnamed()
	if lo.Logf == nil {
		lo.Logf = opt.Logf
	}
	if lo.Backend == "" {
		lo.Backend = eventloop.Backend(cfg.Server.IOBackend)
	}
	set := func(d *time.Duration, seconds float64) {
		if *d == 0 {
			*d = time.Duration(seconds * float64(time.Second))
		}
	}
	set(&lo.HeaderTimeout, cfg.Server.HeaderTimeoutSeconds)
	set(&lo.BodyTimeout, cfg.Server.BodyTimeoutSeconds)
	set(&lo.IdleTimeout, cfg.Server.IdleTimeoutSeconds)
	set(&lo.WriteTimeout, cfg.Server.WriteTimeoutSeconds)
	return lo
}

// ConnectionLimit is the effective max_connections and how it was chosen,
// for the startup line.
type ConnectionLimit struct {
	Max     int
	NoFile  uint64 // RLIMIT_NOFILE (soft) when the limit was derived from it
	Reserve int    // descriptors kept for listeners, loops and files
	Auto    bool   // derived (max_connections = 0)
	Warning string // set when an explicit value exceeds what the descriptors allow
}

// String is the startup line's text.
func (cl ConnectionLimit) String() string {
	if cl.Auto {
		return fmt.Sprintf("max_connections %d (RLIMIT_NOFILE %d minus %d kept for listeners, loops and files)", cl.Max, cl.NoFile, cl.Reserve)
	}
	return fmt.Sprintf("max_connections %d", cl.Max)
}

// connectionLimit decides max_connections. Past the descriptor limit,
// accept fails with EMFILE and the loops can only pause and retry, so the
// automatic limit stays below it by a reserve: a descriptor per listener,
// two per loop (epoll and eventfd), and room for the files the process
// opens (config, /proc reads of the metrics, the Go runtime's own).
func connectionLimit(cfg config.Config, listeners int) ConnectionLimit {
	var rl unix.Rlimit
	nofile := uint64(0)
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &rl); err == nil {
		nofile = rl.Cur
	}
	reserve := 64 + 2*cfg.Server.IOThreads + listeners
	if nofile > 0 && uint64(reserve) > nofile/2 {
		reserve = int(nofile / 2) // a tiny limit: keep half for connections
	}
	avail := 0
	if nofile > 0 {
		avail = int(min(nofile-uint64(reserve), 1<<24))
	}
	if cfg.Server.MaxConnections > 0 {
		cl := ConnectionLimit{Max: cfg.Server.MaxConnections, NoFile: nofile, Reserve: reserve}
		if avail > 0 && cl.Max > avail {
			cl.Warning = fmt.Sprintf("server.max_connections = %d, but RLIMIT_NOFILE is %d: past about %d connections accepts fail (EMFILE) and pause instead of refusing at once; raise the limit (ulimit -n) or lower max_connections", cl.Max, nofile, avail)
		}
		return cl
	}
	if avail <= 0 {
		avail = 1 << 16 // no limit readable: a bound that still protects the loops
	}
	return ConnectionLimit{Max: avail, NoFile: nofile, Reserve: reserve, Auto: true}
}
