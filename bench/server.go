package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"weaseldb/internal/serverproc"
)

// serverStopGrace is how long weaseldb may take to stop after SIGTERM
// before it is killed.
const serverStopGrace = 10 * time.Second

// startServer starts weaseldb from Bin with config through the supervisor,
// every line it prints in RUN/<logName>, and waits until it is ready.
func (t *Tools) startServer(config, logName string, readyTimeout time.Duration) (*serverproc.Process, error) {
	logFile, err := os.Create(t.Path(logName))
	if err != nil {
		return nil, err
	}
	srv, err := serverproc.Start(serverproc.Spec{Name: "weaseldb", Binary: filepath.Join(t.Bin, "weaseldb"),
		ConfigFile: config, Log: logFile, StartTimeout: readyTimeout})
	if err != nil {
		logFile.Close()
		return nil, fmt.Errorf("%w (log %s)", err, logName)
	}
	go func() { <-srv.Done(); logFile.Close() }() // nothing is written to the log after Done
	return srv, nil
}

// serverGOMAXPROCS is the GOMAXPROCS the server said it runs with (0 if it did not).
func serverGOMAXPROCS(srv *serverproc.Process) int {
	v, ok := srv.StartupValue("weaseldb: GOMAXPROCS=")
	fields := strings.Fields(v)
	if !ok || len(fields) == 0 {
		return 0
	}
	n, _ := strconv.Atoi(fields[0])
	return n
}

// socketDir makes a short temporary directory for a unix socket (socket
// paths are limited to 107 bytes, which a run directory may exceed); the
// caller removes it.
func socketDir() (dir, socket string, err error) {
	dir, err = os.MkdirTemp("", "ws")
	if err != nil {
		return "", "", err
	}
	return dir, filepath.Join(dir, "weaseldb.sock"), nil
}

// writeServerConfig writes a config document with the TOML encoder, under a
// comment saying what it is for.
func writeServerConfig(path, head string, doc map[string]any) error {
	data, err := serverproc.EncodeConfig(doc)
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, append([]byte(head), data...), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// readConfigDoc reads a TOML config as a document, keys as they are.
func readConfigDoc(path string) (map[string]any, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return serverproc.ParseConfig(data)
}
