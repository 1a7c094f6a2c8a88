package main

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Against nginx with TLS and HTTP/2, where nginx and openssl are
// installed (nginx-light has both modules): HTTPS/1.1 and h2 by ALPN, every
// request answered, h2 with rendered requests and checks too; skipped
// elsewhere.
func TestNginxTLSAndHTTP2(t *testing.T) {
	for _, tool := range []string{"nginx", "openssl"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed (apt-get install -y nginx-light openssl)", tool)
		}
	}
	dir := t.TempDir()
	cert, key := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if out, err := exec.Command("openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
		"-nodes", "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
		"-keyout", key, "-out", cert).CombinedOutput(); err != nil {
		t.Skipf("openssl: %v\n%s", err, out)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	conf := fmt.Sprintf(`worker_processes 1;
daemon off;
pid %[1]s/nginx.pid;
error_log %[1]s/error.log;
events { worker_connections 1024; }
http {
  access_log off;
  keepalive_requests 100000000; # its default, 1000, closes (HTTP/1.1) or GOAWAYs (h2) connections mid-run
  client_body_temp_path %[1]s/body;
  proxy_temp_path %[1]s/proxy;
  fastcgi_temp_path %[1]s/fastcgi;
  uwsgi_temp_path %[1]s/uwsgi;
  scgi_temp_path %[1]s/scgi;
  server {
    listen 127.0.0.1:%[2]d ssl http2;
    ssl_certificate %[3]s;
    ssl_certificate_key %[4]s;
    location /ok { return 200 '{"status":"ok"}'; }
  }
}
`, dir, port, cert, key)
	if err := os.WriteFile(filepath.Join(dir, "nginx.conf"), []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	// Its output goes to a file: a pipe would keep Wait waiting for the
	// workers too. SIGTERM has the master stop its workers, then exit.
	logFile, err := os.Create(filepath.Join(dir, "nginx.out"))
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	cmd := exec.Command("nginx", "-c", filepath.Join(dir, "nginx.conf"), "-e", filepath.Join(dir, "error.log"))
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Skipf("nginx: %v", err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
	})
	addr := "127.0.0.1:" + strconv.Itoa(port)
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(dir, "error.log"))
			t.Skipf("nginx did not listen on %s: %s", addr, log)
		}
	}
	url := "https://" + addr + "/ok"
	rendered := []string{"--http2", "--streams", "8", "--url", url + "?s={{seq}}", "--header", "X-Id: {{uuid}}",
		"--check", `json.status == "ok"`, "--check", "header[Content-Type] ~ ."}
	for _, extra := range [][]string{{}, {"--pipeline", "8"}, {"--http2", "--streams", "8"}, rendered} {
		var out, errOut bytes.Buffer
		args := append([]string{"--url", url, "--ca", cert, "--concurrency", "4", "--duration", "0.5", "--stats-interval", "0.25",
			"--quiet", "--threshold", "errors<=0"}, extra...)
		if code := run(args, &out, &errOut); code != exitOK || !strings.Contains(out.String(), "ok: every due request answered") {
			t.Errorf("%v: exit %d\n%s%s", extra, code, out.String(), errOut.String())
		}
		if len(extra) > 0 && extra[0] == "--http2" && !strings.Contains(out.String(), "ALPN h2") {
			t.Errorf("--http2: not h2 by ALPN\n%s", out.String())
		}
	}
}
