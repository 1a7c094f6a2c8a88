package main

// Flag values refused in one line that names the flag and says what to
// type, before any load (exit 2).

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"strconv"
	"strings"
)

// flagError is the flag package's error for a value its flag refused,
// without the package's own prefix when the flag's message already names
// it: "invalid value "x" for flag -check: --check "x": ..." said it twice.
func flagError(err error) error {
	msg := err.Error()
	if rest, ok := strings.CutPrefix(msg, "invalid value "); ok {
		if _, after, ok := strings.Cut(rest, " for flag -"); ok {
			name, detail, _ := strings.Cut(after, ": ")
			if strings.HasPrefix(detail, "--"+name) {
				return errors.New(detail)
			}
		}
	}
	return err
}

// checkInputFiles refuses, as a usage error, a file flag naming a file
// that cannot be read: --ca, --cert, --key and --body-file were read only
// when the run began, and failed as if the target were at fault (exit 1).
func checkInputFiles(sf stringFlags, bodyFile string) error {
	for _, in := range []struct{ flag, path string }{{"ca", sf.tls.CAFile}, {"cert", sf.tls.CertFile}, {"key", sf.tls.KeyFile}, {"body-file", bodyFile}} {
		if in.path == "" {
			continue
		}
		f, err := os.Open(in.path)
		if err != nil {
			var pe *fs.PathError
			if errors.As(err, &pe) {
				err = pe.Err
			}
			return fmt.Errorf("--%s %s: cannot read it: %w", in.flag, in.path, err)
		}
		f.Close()
	}
	return nil
}

// checkMetricsAddr refuses a --metrics-addr that is not HOST:PORT ("9467"
// alone reached the listener and came back as Go's "missing port").
func checkMetricsAddr(addr string) error {
	if addr == "" {
		return nil
	}
	_, port, err := net.SplitHostPort(addr)
	if n, perr := strconv.Atoi(port); err != nil || perr != nil || n < 0 || n > 65535 {
		return fmt.Errorf("--metrics-addr %q: want HOST:PORT (:9467 on every interface, 127.0.0.1:9467 on this machine only)", addr)
	}
	return nil
}

// workloadError names the workload file once: LoadWorkload's errors start
// with "workload: " (or the path and it), which after "--workload" said it
// twice.
func workloadError(path string, err error) error {
	msg := err.Error()
	msg = strings.TrimPrefix(msg, path+": ")
	msg = strings.TrimPrefix(msg, "workload: ")
	return fmt.Errorf("--workload %s: %s", path, msg)
}
