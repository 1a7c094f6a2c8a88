// Command weaseldb is the WeaselDB HTTP/1.1 server. It only parses flags and
// wires packages: see server/app.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"
	"time"

	"weaseldb/internal/cliflag"
	"weaseldb/server/app"
	"weaseldb/server/config"
)

const usage = `usage: weaseldb [--config FILE]

Runs the WeaselDB server. Without --config it uses the defaults
(TCP 127.0.0.1:8080). It prints the effective config, one
"weaseldb: listening on ..." line per listener, then "weaseldb: ready".
SIGTERM or SIGINT: stop accepting, answer every request already read
(the last response on each connection says Connection: close), close,
remove unix socket files, exit 0. A second signal exits at once. An event
loop that panics ends the server: the rest stops the same way, exit 1.

flags:
`

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	fs := flag.NewFlagSet("weaseldb", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), usage)
		fs.PrintDefaults()
	}
	path := fs.String("config", "", "TOML config file (see docs/config.md)")
	shutdownTimeout := fs.Duration("shutdown-timeout", 10*time.Second, "how long a graceful stop may take before open connections are closed")
	directWrites := fs.Bool("direct-writes", true, "let release threads write responses to sockets themselves (false: always hand them to the event loop)")
	pipelineSpin := fs.Duration("pipeline-spin", 0, "commit pipeline spin before a stage parks (0: pipeline default, negative: park at once)")
	noYield := fs.Bool("no-yield", false, "do not yield the loop's P to the pipeline after each push")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the whole run to this file (for tuning)")
	if err := cliflag.Parse(fs, args); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		fmt.Fprintf(os.Stderr, "weaseldb: %v\n", err)
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "weaseldb: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	cfg := config.Default()
	if *path != "" {
		var err error
		if cfg, err = config.Load(*path); err != nil {
			fmt.Fprintf(os.Stderr, "weaseldb: %v\n", err)
			return 1
		}
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			fmt.Fprintf(os.Stderr, "weaseldb: %v\n", err)
			return 1
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintf(os.Stderr, "weaseldb: cpuprofile: %v\n", err)
			return 1
		}
		defer pprof.StopCPUProfile()
	}
	procs := app.TuneGOMAXPROCS(cfg)
	fmt.Print(cfg.Summary())
	fmt.Printf("weaseldb: GOMAXPROCS=%d\n", procs)

	// Signals are caught before the listeners exist so a stop that comes
	// during start-up is graceful too.
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)

	srv, err := app.New(cfg, app.Options{DisableDirectWrites: !*directWrites, PipelineSpin: *pipelineSpin, NoYieldAfterPush: *noYield,
		OnLoopError: func(err error) { fmt.Fprintf(os.Stderr, "weaseldb: %v\n", err) },
		Logf:        func(format string, args ...any) { fmt.Fprintf(os.Stderr, "weaseldb: "+format+"\n", args...) },
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "weaseldb: %v\n", err)
		return 1
	}
	srv.Start()
	for _, a := range srv.Addrs() {
		fmt.Printf("weaseldb: listening on %s\n", a)
	}
	if a := srv.AdminAddr(); a != "" {
		// Not a "listening on" line: those are the main listeners, which
		// supervisors (internal/serverproc) read back.
		fmt.Printf("weaseldb: admin (pprof, metrics) on http://%s/debug/pprof/\n", a)
	}
	fmt.Printf("weaseldb: %s\n", srv.ConnectionLimit())
	fmt.Printf("weaseldb: io_backend %s\n", srv.Backend())
	fmt.Println("weaseldb: ready")

	code := 0
	select {
	case sig := <-sigs:
		fmt.Printf("weaseldb: %v: stopping\n", sig)
	case <-srv.Failed():
		// Fail fast: a server short of a loop is not the one configured.
		// The loop's own connections are already closed (and OnLoopError
		// printed why); the rest are stopped gracefully, and the exit
		// status tells a supervisor to start the server again.
		fmt.Fprintln(os.Stderr, "weaseldb: stopping: an event loop failed")
		code = 1
	}
	go func() {
		sig := <-sigs
		fmt.Fprintf(os.Stderr, "weaseldb: second %v: exiting at once\n", sig)
		os.Exit(130)
	}()
	if err := srv.Shutdown(*shutdownTimeout); err != nil {
		if code == 0 {
			fmt.Fprintf(os.Stderr, "weaseldb: shutdown: %v\n", err)
		}
		return 1
	}
	fmt.Println("weaseldb: stopped")
	return code
}
