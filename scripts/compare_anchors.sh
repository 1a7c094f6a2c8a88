#!/usr/bin/env bash
# Side-by-side comparison of weaseldb's GET /ok with its two anchors
# (docs/weaseldb.md, docs/anchors.md): nginx with 1 worker answering
# `return 200`, and a minimal Go net/http server (cmd/nethttp_ok).
# Load: wrk -t1 -c100 over loopback TCP, DURATION s per run, contenders
# alternated (A B C A B C ...) ROUNDS times; medians, then the ratios.
# weaseldb runs with io_threads=1, pipeline_release_threads=1,
# ok_resolve_iterations=0, WAIT_STRATEGY (default WaitIfStageEmpty) and
# the server's own thread_names ("auto": unpinned, the stages run as
# goroutines on the loop's thread), or THREAD_NAMES where set (true: an OS
# thread switch per hand-off; false).
#
# Usage: scripts/compare_anchors.sh        (env: DURATION=4 ROUNDS=3 CONNS=100
#        WAIT_STRATEGY=WaitIfStageEmpty WEASELDB_ARGS="" WEASELDB_ENV="" (e.g.
#        GOMAXPROCS=3, for weaseldb only) IDLE=1 to also
#        measure weaseldb's CPU with 100 idle keep-alive connections)
# shellcheck source-path=SCRIPTDIR
set -euo pipefail

DURATION=${DURATION:-4}
ROUNDS=${ROUNDS:-3}
CONNS=${CONNS:-100}
WAIT_STRATEGY=${WAIT_STRATEGY:-WaitIfStageEmpty}
WEASELDB_ARGS=${WEASELDB_ARGS:-}
WEASELDB_ENV=${WEASELDB_ENV:-}
IDLE=${IDLE:-0}
PORT_NGINX=${PORT_NGINX:-18201}
PORT_GO=${PORT_GO:-18202}
PORT_WDB=${PORT_WDB:-18203}

root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=lib/tools.sh
. "$root/scripts/lib/tools.sh"
# shellcheck source=lib/stats.sh
. "$root/scripts/lib/stats.sh"
# shellcheck source=lib/proc.sh
. "$root/scripts/lib/proc.sh"
# shellcheck source=lib/nginx_anchor.sh
. "$root/scripts/lib/nginx_anchor.sh"
need_tools wrk nginx go
work=$(mktemp -d /tmp/compare_anchors.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]:-}"; do if [ -n "$p" ]; then kill "$p" 2>/dev/null || true; fi; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

echo "== building into $work"
(cd "$root" && go build -trimpath -o "$work/" ./cmd/weaseldb ./cmd/nethttp_ok ./cmd/peers)

write_nginx_conf "$work/nginx" "$PORT_NGINX"

cat >"$work/weaseldb.toml" <<TOML
[server]
interfaces = [{ type = "tcp", address = "127.0.0.1", port = $PORT_WDB }]
io_threads = 1
${THREAD_NAMES:+thread_names = $THREAD_NAMES}
[commit]
pipeline_wait_strategy = "$WAIT_STRATEGY"
pipeline_release_threads = 1
[benchmark]
ok_resolve_iterations = 0
TOML

start_nginx_anchor "$work/nginx" "$PORT_NGINX" || exit 1
pids+=("$NGINX_PID")
"$work/nethttp_ok" --addr "127.0.0.1:$PORT_GO" >"$work/nethttp.log" 2>&1 & pids+=($!)
# shellcheck disable=SC2086
env $WEASELDB_ENV "$work/weaseldb" --config "$work/weaseldb.toml" $WEASELDB_ARGS >"$work/weaseldb.log" 2>&1 & wdb_pid=$!; pids+=("$wdb_pid")

for port in "$PORT_GO" "$PORT_WDB"; do
  wait_port "$port" || { echo "compare_anchors: nothing listens on port $port" >&2; exit 1; }
done
grep -E "GOMAXPROCS|ready" "$work/weaseldb.log" | sed 's/^/   /'

# The process that serves: nginx's worker, not its master.
nginx_master=$(cat "$work/nginx/nginx.pid")
nginx_worker=$(pgrep -P "$nginx_master" | head -1)
go_pid=${pids[1]}

# CPU (user+system, ns) and context switches (all threads) of a process,
# read by build/peers through internal/procstat (the tree's one /proc
# reader): steadier than req/s on a shared machine, so they are printed too.

declare -A results
names=(nginx nethttp weaseldb)
ports=("$PORT_NGINX" "$PORT_GO" "$PORT_WDB")
procs=("$nginx_worker" "$go_pid" "$wdb_pid")
echo "== wrk -t1 -c$CONNS -d${DURATION}s, $ROUNDS rounds, alternating"
for r in $(seq 1 "$ROUNDS"); do
  for i in 0 1 2; do
    p=${procs[$i]}
    read -r t0 c0 _ < <("$work/peers" sample "$p")
    out=$(wrk -t1 -c"$CONNS" -d"${DURATION}s" "http://127.0.0.1:${ports[$i]}/ok")
    read -r t1 c1 _ < <("$work/peers" sample "$p")
    rps=$(echo "$out" | awk '/Requests\/sec/ {print $2}')
    reqs=$(echo "$out" | awk '/requests in/ {print $1}')
    results[${names[$i]}]="${results[${names[$i]}]:-} $rps"
    awk -v r="$r" -v n="${names[$i]}" -v rps="$rps" -v q="$reqs" -v t=$((t1 - t0)) -v c=$((c1 - c0)) \
      'BEGIN {printf "   round %d %-9s %12s req/s   server CPU %5.2f us/req   %6.1f context switches/1000 req\n", r, n, rps, t / 1000 / q, 1000 * c / q}'
  done
done

m_nginx=$(echo "${results[nginx]}" | median)
m_go=$(echo "${results[nethttp]}" | median)
m_wdb=$(echo "${results[weaseldb]}" | median)
echo "== medians (req/s): nginx $m_nginx  nethttp $m_go  weaseldb $m_wdb"
awk -v w="$m_wdb" -v n="$m_nginx" -v g="$m_go" 'BEGIN {
  printf "weaseldb / nginx   = %.2f   (bar: >= 0.80)\n", w / n
  printf "weaseldb / nethttp = %.2f   (bar: >= 1.50)\n", w / g
}'

if [ "$IDLE" = "1" ]; then
  need_tool python3 "IDLE=1 needs it: apt-get install -y python3"
  echo "== weaseldb CPU with $CONNS idle keep-alive connections over 10 s"
  python3 - "$PORT_WDB" "$CONNS" "$wdb_pid" "$work/peers" <<'PY'
import socket, subprocess, sys, time
port, n, pid, peers = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
conns = []
for _ in range(n):
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(b"GET /ok HTTP/1.1\r\nHost: x\r\n\r\n")
    s.recv(4096)
    conns.append(s)
def cpu():
    out = subprocess.run([peers, "sample", pid], check=True, capture_output=True, text=True).stdout
    return int(out.split()[0]) / 1e9
time.sleep(1)
c0, t0 = cpu(), time.time()
time.sleep(10)
c1, t1 = cpu(), time.time()
print(f"idle CPU: {100 * (c1 - c0) / (t1 - t0):.2f}% of one core (bar: <= 0.5%), {c1 - c0:.2f} s CPU in {t1 - t0:.1f} s")
PY
fi
