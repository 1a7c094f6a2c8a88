package main

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"weaseldb/loadtester"
)

// parseTarget sets the target from --url, --host, --port, --path and
// --unix-socket, refusing the combinations where one would silently
// override another: --url gives the path (--path with it is refused), and
// --unix-socket replaces the TCP host and port (--host or --port with it is
// refused). --unix-socket with --url connects to the socket and sends the
// URL's path with its host as the Host header and, over https://, as SNI,
// as curl --unix-socket does; a Host header or --sni given wins.
func parseTarget(cfg *loadtester.Config, sf *stringFlags, set map[string]bool) error {
	if sf.url == "" {
		if cfg.UnixSocket != "" {
			for _, f := range []string{"host", "port"} {
				if set[f] {
					return fmt.Errorf("--unix-socket and --%s: the socket replaces the TCP host and port; give one", f)
				}
			}
		}
		return nil
	}
	if set["path"] {
		return errors.New("--url and --path: the URL gives the path; put it in the URL, or give --host/--port with --path")
	}
	for _, f := range []string{"host", "port"} {
		if set[f] {
			return fmt.Errorf("--url and --%s: the URL gives the host and port; give one", f)
		}
	}
	if err := cfg.SetURL(sf.url); err != nil {
		return err
	}
	if cfg.UnixSocket == "" {
		return nil
	}
	host := cfg.Host
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if !(cfg.Port == 80 && cfg.TLS == nil || cfg.Port == 443 && cfg.TLS != nil) {
		host += ":" + strconv.Itoa(cfg.Port)
	}
	if !slices.ContainsFunc(cfg.Headers, isHostHeader) {
		cfg.Headers = append(cfg.Headers, "Host: "+host)
	}
	if sf.tls.ServerName == "" {
		sf.tls.ServerName = cfg.Host
	}
	return nil
}

// isHostHeader reports whether a --header sets Host.
func isHostHeader(h string) bool {
	name, _, _ := strings.Cut(h, ":")
	return strings.EqualFold(strings.TrimSpace(name), "host")
}
