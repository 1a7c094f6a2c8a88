package gate

// Test-only stand-ins for the two binaries the gate drives. The test binary
// re-executes itself through symlinks named "fakeserver" and
// "fakeloadtester"; TestMain dispatches on that name. They speak the same
// contracts as build/weaseldb and build/load_tester (docs/CONTRACTS.md), so
// the gate's orchestration is tested without them.

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/BurntSushi/toml"
)

func TestMain(m *testing.M) {
	switch filepath.Base(os.Args[0]) {
	case "fakeserver":
		os.Exit(fakeServerMain(os.Args[1:]))
	case "fakeloadtester":
		os.Exit(fakeLoadTesterMain(os.Args[1:]))
	case "fakevalgrind":
		os.Exit(fakeValgrindMain(os.Args[1:]))
	}
	// The fakes are this test binary: built with -race, each would sleep
	// a second at exit (the race runtime's atexit_sleep_ms default), which
	// was most of this package's test time.
	os.Setenv("GORACE", strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	os.Exit(m.Run())
}

// fakeBinaries returns paths of the two fakes (symlinks to this test binary).
func fakeBinaries(t *testing.T) (server, loadTester string) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	server, loadTester = filepath.Join(dir, "fakeserver"), filepath.Join(dir, "fakeloadtester")
	for _, p := range []string{server, loadTester} {
		if err := os.Symlink(self, p); err != nil {
			t.Fatal(err)
		}
	}
	return server, loadTester
}

// fakeConfig is what the fake server reads: the real [server] interfaces
// (written by the gate) plus a [fake] section that shapes its behaviour.
type fakeConfig struct {
	Server struct {
		Interfaces []struct {
			Type    string
			Address string
			Port    int
			Path    string
		}
	}
	Fake struct {
		DelayUS    int  `toml:"delay_us"`    // per /ok request
		FailStart  bool `toml:"fail_start"`  // exit 1 before ready
		NeverReady bool `toml:"never_ready"` // listen but never print the ready line
		ErrorEvery int  `toml:"error_every"` // answer 500 to every Nth request
		DieAfter   int  `toml:"die_after"`   // exit 3 after N requests
		// PostDelayUS replaces delay_us for POST requests: a server slowed
		// on its commit path alone.
		PostDelayUS int `toml:"post_delay_us"`
		// RefuseNoSetup answers 409 to GETs of a path with "status" in it
		// until a POST has been served: a status load whose setup did not run.
		RefuseNoSetup bool `toml:"refuse_without_setup"`
	}
}

func fakeServerMain(args []string) int {
	fs := flag.NewFlagSet("fakeserver", flag.ContinueOnError)
	cfgPath := fs.String("config", "", "config file")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	var cfg fakeConfig
	if _, err := toml.DecodeFile(*cfgPath, &cfg); err != nil {
		fmt.Fprintln(os.Stderr, "fakeserver:", err)
		return 1
	}
	if cfg.Fake.FailStart || len(cfg.Server.Interfaces) != 1 {
		fmt.Fprintln(os.Stderr, "fakeserver: bind: address already in use")
		return 1
	}
	iface := cfg.Server.Interfaces[0]
	network, addr := "unix", iface.Path
	if iface.Type == "tcp" {
		network, addr = "tcp", net.JoinHostPort(iface.Address, strconv.Itoa(iface.Port))
	}
	l, err := net.Listen(network, addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fakeserver:", err)
		return 1
	}
	var served, posts atomic.Int64
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := served.Add(1)
		if cfg.Fake.DieAfter > 0 && n > int64(cfg.Fake.DieAfter) {
			fmt.Fprintln(os.Stderr, "fakeserver: crashing as told")
			os.Exit(3)
		}
		delayUS := cfg.Fake.DelayUS
		if r.Method == http.MethodPost {
			posts.Add(1)
			if cfg.Fake.PostDelayUS > 0 {
				delayUS = cfg.Fake.PostDelayUS
			}
		}
		if cfg.Fake.RefuseNoSetup && r.Method == http.MethodGet && strings.Contains(r.URL.Path, "status") && posts.Load() == 0 {
			http.Error(w, "no setup", http.StatusConflict)
			return
		}
		time.Sleep(time.Duration(delayUS) * time.Microsecond)
		if cfg.Fake.ErrorEvery > 0 && n%int64(cfg.Fake.ErrorEvery) == 0 {
			http.Error(w, "injected", http.StatusInternalServerError)
			return
		}
		w.Header().Set("X-Fake-Delay-Us", strconv.Itoa(delayUS))
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"status":"ok"}`)
	})}
	go srv.Serve(l)
	if !cfg.Fake.NeverReady {
		fmt.Println("weaseldb: listening on", network, l.Addr())
		fmt.Println("weaseldb: ready")
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, os.Interrupt)
	<-sig
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	srv.Shutdown(ctx)
	return 0
}

// fakeLoadTesterMain is a closed-loop HTTP client with load_tester's flags
// and --json result (only the fields the gate reads). It sends real requests
// and counts real errors, but reports the throughput the server's delay
// allows (concurrency / delay, from the X-Fake-Delay-Us header), not what a
// race-instrumented client on a loaded machine happened to reach: the
// orchestration tests must not depend on the machine's speed.
func fakeLoadTesterMain(args []string) int {
	fs := flag.NewFlagSet("fakeloadtester", flag.ContinueOnError)
	sock := fs.String("unix-socket", "", "")
	host := fs.String("host", "127.0.0.1", "")
	port := fs.Int("port", 0, "")
	duration := fs.Duration("duration", time.Second, "")
	warmup := fs.Duration("warmup", 0, "")
	conc := fs.Int("concurrency", 4, "")
	fs.Int("network-threads", 1, "")
	path := fs.String("path", "/ok", "")
	method := fs.String("method", "GET", "")
	body := fs.String("body", "", "")
	var headers []string
	fs.Func("header", "", func(v string) error { headers = append(headers, v); return nil })
	fs.Int("pipeline", 1, "")
	fs.Float64("rate", 0, "")
	fs.Bool("quiet", false, "")
	jsonPath := fs.String("json", "", "")
	unfinished := fs.Int("pretend-unfinished", 0, "report this many due requests as unfinished")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	tr := &http.Transport{MaxIdleConnsPerHost: *conc}
	url := fmt.Sprintf("http://%s:%d%s", *host, *port, *path)
	if *sock != "" {
		tr.DialContext = func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", *sock)
		}
		url = "http://fake" + *path
	}
	client := &http.Client{Transport: tr, Timeout: 5 * time.Second}
	start := time.Now()
	measureTo := start.Add(*warmup + *duration)
	var requests, errs, delayUS atomic.Int64
	var wg sync.WaitGroup
	for range *conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(measureTo) {
				req, err := http.NewRequest(*method, url, strings.NewReader(*body))
				if err != nil {
					return
				}
				for _, h := range headers {
					name, value, _ := strings.Cut(h, ":")
					req.Header.Set(strings.TrimSpace(name), strings.TrimSpace(value))
				}
				resp, err := client.Do(req)
				ok := err == nil && resp.StatusCode == http.StatusOK
				if err == nil {
					if d, err := strconv.Atoi(resp.Header.Get("X-Fake-Delay-Us")); err == nil {
						delayUS.Store(int64(d))
					}
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
				// Every response counts, warm-up included: a starved fake on a
				// loaded machine may answer none inside a short window, and the
				// reported rate is a model anyway.
				requests.Add(1)
				if !ok {
					errs.Add(1)
				}
				if err != nil && errors.Is(err, syscall.ECONNREFUSED) {
					return
				}
			}
		}()
	}
	wg.Wait()
	rps := 0.0
	if d := delayUS.Load(); d > 0 && requests.Load() > 0 {
		rps = float64(*conc) * 1e6 / float64(d)
	}
	p50 := int64(0)
	if d := delayUS.Load(); d > 0 {
		p50 = d * 1000
	}
	result := map[string]any{
		"version": 1, "requests": requests.Load(), "errors": errs.Load(), "duration_s": duration.Seconds(),
		"requests_per_sec": rps, "unfinished": *unfinished, "latency_ns": map[string]any{"p50": p50, "p99": p50},
		"due": requests.Load() + int64(*unfinished), "answered": requests.Load() - errs.Load(), "failed": errs.Load(),
	}
	data, _ := json.Marshal(result)
	if err := os.WriteFile(*jsonPath, data, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "fakeloadtester:", err)
		return 1
	}
	if requests.Load() == 0 {
		fmt.Fprintln(os.Stderr, "fakeloadtester: target down")
		return 1
	}
	// As load_tester: failed, unfinished or dropped requests over
	// --max-errors (0) exit 1, after the result is written.
	if errs.Load()+int64(*unfinished) > 0 {
		fmt.Fprintf(os.Stderr, "fakeloadtester: %d errors, %d unfinished\n", errs.Load(), *unfinished)
		return 1
	}
	return 0
}
