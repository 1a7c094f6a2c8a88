#!/usr/bin/env bash
# HTTPS side by side: load_tester against wrk (HTTP/1.1) and h2load
# (HTTP/2, 10 connections x 10 streams), all over TLS to nginx
# (1 worker, `return 200`, the anchor of docs/anchors.md, with `listen ssl`
# and a self-signed P-256 certificate made at run time), loopback, one
# client thread, 100 connections kept open, unpipelined and 16 deep,
# alternating the contenders (which goes first alternates by round),
# medians over the rounds. nginx runs on the first allowed CPU and either
# client on the second (taskset; PIN=0 leaves them unpinned). TLS 1.3 with
# TLS_AES_128_GCM_SHA256 for both (nginx's ssl_conf_command), so neither
# pays for a heavier cipher.
#
# Usage: scripts/compare_tls.sh [ROUNDS] [SECONDS]   (defaults 5 and 3)
# Prints req/s and client CPU per request (user+system of the client
# process, from the kernel via /usr/bin/time, divided by the requests it
# reports), each round's load_tester/wrk ratios and their medians.
# Needs: go, wrk, h2load (nghttp2-client), nginx (nginx-light), openssl,
# /usr/bin/time, python3, taskset.
set -euo pipefail

ROUNDS=${1:-5}
SECS=${2:-3}
CONNS=100
DEPTH=16
ROOT=$(cd "$(dirname "$0")/.." && pwd)

for tool in go wrk h2load nginx openssl /usr/bin/time python3 taskset; do
    command -v "$tool" >/dev/null || { echo "compare_tls: $tool not found (apt-get install -y wrk nghttp2-client nginx-light openssl time)" >&2; exit 1; }
done

WORK=$(mktemp -d)
NGINX_PID=""
cleanup() {
    if [ -n "$NGINX_PID" ]; then kill "$NGINX_PID" 2>/dev/null || true; wait "$NGINX_PID" 2>/dev/null || true; fi
    rm -rf "$WORK"
}
trap cleanup EXIT INT TERM

(cd "$ROOT" && go build -trimpath -o "$WORK/load_tester" ./cmd/load_tester)
LT=$WORK/load_tester

# shellcheck source=lib/cpus.sh
. "$ROOT/scripts/lib/cpus.sh"
pin_server_and_client nginx

PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
# shellcheck source=lib/nginx_anchor.sh
. "$ROOT/scripts/lib/nginx_anchor.sh"
write_nginx_conf "$WORK" "$PORT"
self_signed_cert "$WORK"
nginx_to_tls "$WORK"
# shellcheck source=lib/wrk.sh
. "$ROOT/scripts/lib/wrk.sh"
write_pipeline_lua "$WORK/pipeline.lua" 16

start_nginx_anchor "$WORK" "$PORT"
URL="https://127.0.0.1:$PORT/ok"

# run_wrk EXTRA...: prints "req_per_s cpu_s requests"
run_wrk() {
    /usr/bin/time -f 'CPU %U %S' -o "$WORK/time" "${CLIENT_ON[@]}" wrk -t1 -c$CONNS -d${SECS}s "$@" "$URL" >"$WORK/out" 2>&1
    awk -v t="$(awk '/^CPU/{print $2+$3}' "$WORK/time")" '
        /requests in/ {n=$1} /^Requests\/sec/ {r=$2}
        END {print r, t, n}' "$WORK/out"
}
# run_lt EXTRA...: the same for load_tester (plus its errors and client-bound flag)
run_lt() {
    /usr/bin/time -f 'CPU %U %S' -o "$WORK/time" "${CLIENT_ON[@]}" "$LT" --url "$URL" --ca "$WORK/cert.pem" \
        --concurrency $CONNS --network-threads 1 --duration "$SECS" --json "$WORK/lt.json" --quiet "$@" >"$WORK/out" 2>&1 || true
    python3 - "$WORK/lt.json" "$(awk '/^CPU/{print $2+$3}' "$WORK/time")" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print(r["requests_per_sec"], sys.argv[2], r["requests"], "errors", r["errors"], "client_bound", r["client_bound"], r["tls"]["version"], sep=" ")
PY
}

# run_h2load: prints "req_per_s cpu_s requests" (10 connections x 10 streams)
run_h2load() {
    /usr/bin/time -f 'CPU %U %S' -o "$WORK/time" "${CLIENT_ON[@]}" h2load -t1 -c10 -m10 -D "$SECS" "$URL" >"$WORK/out" 2>&1 || true
    awk -v t="$(awk '/^CPU/{print $2+$3}' "$WORK/time")" '
        /^finished in/ {r=$4} /^requests:/ {n=$8}
        END {print r, t, n}' "$WORK/out"
}

declare -A RPS CPU LAST LASTCPU
record() { # name line
    local name=$1; shift
    read -r rps cpu n rest <<<"$*"
    local per
    per=$(awk -v c="$cpu" -v n="$n" 'BEGIN{printf "%.0f", (n>0? c*1e9/n : 0)}')
    RPS[$name]+="$rps "; CPU[$name]+="$per "; LAST[$name]=$rps; LASTCPU[$name]=$per
    printf '  %-16s %10.0f req/s  %6s ns CPU/request  %s\n' "$name" "$rps" "$per" "${rest:-}"
}
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END{print (NR%2? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.3f", (b>0? a/b : 0)}'; }

echo "nginx 1 worker, TLS, on 127.0.0.1:$PORT; $ROUNDS rounds of ${SECS}s, alternating; $(nproc) CPUs, $PINNED; load $(cut -d' ' -f1-3 /proc/loadavg)"
declare -A PAIR_RPS PAIR_CPU
for round in $(seq "$ROUNDS"); do
    echo "round $round"
    if [ $((round % 2)) = 1 ]; then
        record wrk "$(run_wrk)"; record load_tester "$(run_lt)"
        record wrk_pipe16 "$(run_wrk -s "$WORK/pipeline.lua")"; record lt_pipe16 "$(run_lt --pipeline $DEPTH)"
    else
        record load_tester "$(run_lt)"; record wrk "$(run_wrk)"
        record lt_pipe16 "$(run_lt --pipeline $DEPTH)"; record wrk_pipe16 "$(run_wrk -s "$WORK/pipeline.lua")"
    fi
    if [ $((round % 2)) = 1 ]; then
        record h2load "$(run_h2load)"; record lt_h2 "$(run_lt --http2 --concurrency 10 --streams 10)"
    else
        record lt_h2 "$(run_lt --http2 --concurrency 10 --streams 10)"; record h2load "$(run_h2load)"
    fi
    PAIR_RPS[h2]+="$(ratio "${LAST[lt_h2]}" "${LAST[h2load]}") "; PAIR_CPU[h2]+="$(ratio "${LASTCPU[lt_h2]}" "${LASTCPU[h2load]}") "
    PAIR_RPS[1]+="$(ratio "${LAST[load_tester]}" "${LAST[wrk]}") "; PAIR_CPU[1]+="$(ratio "${LASTCPU[load_tester]}" "${LASTCPU[wrk]}") "
    PAIR_RPS[16]+="$(ratio "${LAST[lt_pipe16]}" "${LAST[wrk_pipe16]}") "; PAIR_CPU[16]+="$(ratio "${LASTCPU[lt_pipe16]}" "${LASTCPU[wrk_pipe16]}") "
done

echo
echo "medians over $ROUNDS rounds:"
for name in wrk load_tester wrk_pipe16 lt_pipe16 h2load lt_h2; do
    printf '  %-16s %10.0f req/s  %6.0f ns CPU/request\n' "$name" "$(echo "${RPS[$name]}" | median)" "$(echo "${CPU[$name]}" | median)"
done
echo
for d in 1 16 h2; do
    label="wrk, unpipelined"; [ "$d" = 16 ] && label="wrk, pipeline 16"; [ "$d" = h2 ] && label="h2load, h2 10x10"
    echo "load_tester / $label: req/s per round ${PAIR_RPS[$d]}-> median $(echo "${PAIR_RPS[$d]}" | median) (goal >= 1.0);" \
        "CPU per request per round ${PAIR_CPU[$d]}-> median $(echo "${PAIR_CPU[$d]}" | median) (goal <= 1.0)"
done
