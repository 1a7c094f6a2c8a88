# shellcheck shell=bash
# Sourced by the comparison scripts: the nginx anchor exactly as
# docs/anchors.md describes it (1 worker, `return 200` with /ok's body).
#
# write_nginx_conf DIR PORT: writes DIR/nginx.conf with pid, logs and temp
# paths inside DIR, listening on 127.0.0.1:PORT. Start it with
# `nginx -c DIR/nginx.conf`; its master's pid lands in DIR/nginx.pid.
write_nginx_conf() {
  local dir=$1 port=$2
  mkdir -p "$dir"
  cat >"$dir/nginx.conf" <<NGINX
worker_processes 1;
daemon off;
pid $dir/nginx.pid;
error_log $dir/error.log;
events { worker_connections 8192; use epoll; multi_accept on; }
http {
  access_log off;
  client_body_temp_path $dir/body;
  proxy_temp_path $dir/proxy;
  fastcgi_temp_path $dir/fastcgi;
  uwsgi_temp_path $dir/uwsgi;
  scgi_temp_path $dir/scgi;
  keepalive_requests 100000000;
  server {
    listen 127.0.0.1:$port backlog=4096;
    location /ok { return 200 '{"status":"ok"}'; }
  }
}
NGINX
}

# start_nginx_anchor DIR PORT: starts nginx with DIR/nginx.conf (under
# SERVER_ON, when the caller pinned it), sets NGINX_PID, and waits until
# 127.0.0.1:PORT accepts; if it never does, says why on stderr and returns 1
# (the caller's cleanup stops what was started).
start_nginx_anchor() {
  local dir=$1 port=$2
  "${SERVER_ON[@]}" nginx -c "$dir/nginx.conf" >"$dir/nginx.out" 2>&1 &
  NGINX_PID=$!
  for _ in $(seq 50); do
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && return 0
    kill -0 "$NGINX_PID" 2>/dev/null || break
    sleep 0.1
  done
  echo "nginx did not start on 127.0.0.1:$port:" >&2
  tail -5 "$dir/nginx.out" "$dir/error.log" >&2 2>/dev/null
  return 1
}

# stop_nginx_anchor: stops the nginx start_nginx_anchor started (NGINX_PID),
# if any, and waits for it; for the caller's cleanup.
stop_nginx_anchor() {
  if [ -n "${NGINX_PID:-}" ]; then
    kill "$NGINX_PID" 2>/dev/null || true
    wait "$NGINX_PID" 2>/dev/null || true
  fi
}

# nginx_to_h2c DIR: turns DIR/nginx.conf's listener into cleartext HTTP/2
# (h2c with prior knowledge, what load_tester --http2 speaks to an http://
# URL); nginx-light has the http2 module.
nginx_to_h2c() {
  sed -i 's/ backlog=4096;/ http2 backlog=4096;/' "$1/nginx.conf"
}

# self_signed_cert DIR: DIR/cert.pem and DIR/key.pem, a P-256 certificate
# for 127.0.0.1 valid for a day.
self_signed_cert() {
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj /CN=127.0.0.1 \
    -addext subjectAltName=IP:127.0.0.1 -keyout "$1/key.pem" -out "$1/cert.pem" 2>/dev/null
}

# nginx_to_tls DIR: turns DIR/nginx.conf's listener into TLS with h2 (the
# certificate self_signed_cert made in DIR), TLS 1.3 with
# TLS_AES_128_GCM_SHA256 only, so no client pays for a heavier cipher.
nginx_to_tls() {
  python3 - "$1/nginx.conf" "$1" <<'PY'
import sys
path, work = sys.argv[1], sys.argv[2]
conf = open(path).read()
conf = conf.replace("backlog=4096;", f"""ssl http2 backlog=4096;
    ssl_certificate {work}/cert.pem;
    ssl_certificate_key {work}/key.pem;
    ssl_protocols TLSv1.2 TLSv1.3;
    ssl_conf_command Ciphersuites TLS_AES_128_GCM_SHA256;""", 1)
open(path, "w").write(conf)
PY
}
