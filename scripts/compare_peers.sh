#!/usr/bin/env bash
# The whole anchors table in one run (issue 42 item 2; docs/anchors.md,
# "The whole table in one run"): on this machine, interleaved rounds of
#   - every server peer under wrk -t1 -c$CONNS, GET /ok unpipelined and 16
#     deep: weaseldb with its defaults and fitted, nginx, gnet, fasthttp,
#     net/http (req/s, server CPU and context switches per request);
#   - every client peer against nginx (CLIENT_TARGET=weaseldb: against
#     weaseldb with its defaults, which answers a pipelined batch in one
#     write where nginx writes each response alone; HTTPS and h2 stay on
#     nginx, weaseldb serves no TLS): load_tester on each engine
#     (load_tester: --io-backend epoll, load_tester_io_uring: io_uring)
#     against wrk (closed loop, unpipelined and 16 deep), wrk2 (open loop at
#     RATE, only where installed), wrk on HTTPS/1.1 and h2load on h2 (req/s,
#     client CPU per request);
# then, once a peer, instructions per request under callgrind (the gate's
# cost-tier method; load_tester on epoll only, valgrind 3.19 hangs in
# io_uring_enter) and system calls per request under strace -c -f.
# build/peers turns the samples into OUT/peers.json and OUT/peers.md and,
# with --splice (SPLICE=1), writes the markdown into README.md and
# docs/anchors.md between their peers markers: do that on a quiet machine
# only, the table is a result.
#
# Usage: scripts/compare_peers.sh [--splice]
# Env: DURATION=3 (s a run) ROUNDS=3 CONNS=100 RATE=50000 PIN=1 COST=1
#      STRACE=1 SERVERS=1 CLIENTS=1 CLIENT_TARGET=nginx (or weaseldb)
#      OUT=build/anchors COST_REQUESTS=1000
#      COST_RATE=250 COST_PIPELINED_REQUESTS=2048 COST_PIPELINED_RATE=1600
#      (the gate's) COST_CLIENT_S=5 COST_CONNS=10 STRACE_S=1
# Needs: go, wrk, nginx (nginx-light), openssl, /usr/bin/time, python3,
# taskset; h2load, wrk2, valgrind and strace are used where installed (a
# row says what was not measured, and why).
# shellcheck source-path=SCRIPTDIR
set -euo pipefail

DURATION=${DURATION:-3}
ROUNDS=${ROUNDS:-3}
CONNS=${CONNS:-100}
RATE=${RATE:-50000}
COST=${COST:-1}
STRACE=${STRACE:-1}
SERVERS=${SERVERS:-1}
CLIENTS=${CLIENTS:-1}
COST_REQUESTS=${COST_REQUESTS:-1000}
COST_RATE=${COST_RATE:-250}
COST_PIPELINED_REQUESTS=${COST_PIPELINED_REQUESTS:-2048}
COST_PIPELINED_RATE=${COST_PIPELINED_RATE:-1600}
STRACE_S=${STRACE_S:-1}
COST_CLIENT_S=${COST_CLIENT_S:-5}
COST_CONNS=${COST_CONNS:-10}
CLIENT_TARGET=${CLIENT_TARGET:-nginx}
SPLICE=${SPLICE:-0}
[ "${1:-}" != --splice ] || SPLICE=1
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${OUT:-$ROOT/build/anchors}

case $CLIENT_TARGET in
  nginx|weaseldb) ;;
  *) echo "compare_peers: CLIENT_TARGET=$CLIENT_TARGET: want nginx or weaseldb" >&2; exit 2 ;;
esac

# The output folder is made first: a path that cannot be one (a file of
# that name) fails now, not after ten minutes of measuring.
mkdir -p "$OUT" || { echo "compare_peers: OUT=$OUT: cannot create the output folder" >&2; exit 1; }

# shellcheck source=lib/tools.sh
. "$ROOT/scripts/lib/tools.sh"
need_tools go wrk nginx openssl /usr/bin/time python3 taskset

WORK=$(mktemp -d /tmp/compare_peers.XXXXXX)
PIDS=()
# cleanup stops every process this script started (nginx masters take
# their workers with them), then removes the work folder.
cleanup() {
  local p
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  sleep 0.3
  for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT INT TERM

# shellcheck source=lib/cpus.sh
. "$ROOT/scripts/lib/cpus.sh"
# shellcheck source=lib/proc.sh
. "$ROOT/scripts/lib/proc.sh"
# shellcheck source=lib/nginx_anchor.sh
. "$ROOT/scripts/lib/nginx_anchor.sh"
# shellcheck source=lib/wrk.sh
. "$ROOT/scripts/lib/wrk.sh"
# shellcheck source=lib/peers_samples.sh
. "$ROOT/scripts/lib/peers_samples.sh"
# shellcheck source=lib/peers_servers.sh
. "$ROOT/scripts/lib/peers_servers.sh"
# shellcheck source=lib/peers_clients.sh
. "$ROOT/scripts/lib/peers_clients.sh"
# shellcheck source=lib/peers_counts.sh
. "$ROOT/scripts/lib/peers_counts.sh"
pin_server_and_client "the servers"
SAMPLES=$WORK/samples.jsonl
: >"$SAMPLES"
write_pipeline_lua "$WORK/pipeline16.lua" 16

echo "== building into $WORK/bin"
BIN=$WORK/bin
(cd "$ROOT" && go build -trimpath -o "$BIN/" ./cmd/weaseldb ./cmd/load_tester ./cmd/nethttp_ok ./cmd/peers)
(cd "$ROOT/peers" && go build -trimpath -o "$BIN/" ./gnet_ok ./fasthttp_ok)
PEERS=$BIN/peers
LOAD_AT_START=$(cut -d' ' -f1-3 /proc/loadavg)

# start_servers: every server peer at once, for the whole run.
declare -A SERVER_PORT SERVER_PID
start_servers() {
  local name
  for name in "${SERVER_NAMES[@]}"; do
    SERVER_PORT[$name]=$(free_port)
    start_server "$name" "${SERVER_PORT[$name]}" "$WORK/$name"
    SERVER_PID[$name]=$SERVED_BY
  done
}

# start_client_targets: the clients' targets, CLIENT_TARGET plain (nginx,
# or weaseldb with its defaults) and nginx with TLS.
start_client_targets() {
  local port
  port=$(free_port)
  if [ "$CLIENT_TARGET" = weaseldb ]; then
    start_server weaseldb "$port" "$WORK/target"
  else
    write_nginx_conf "$WORK/target" "$port"
    start_nginx_anchor "$WORK/target" "$port"; PIDS+=("$NGINX_PID")
  fi
  PLAIN_URL=http://127.0.0.1:$port/ok
  TLS_DIR=$WORK/target-tls; port=$(free_port)
  write_nginx_conf "$TLS_DIR" "$port"; self_signed_cert "$TLS_DIR"; nginx_to_tls "$TLS_DIR"
  start_nginx_anchor "$TLS_DIR" "$port"; PIDS+=("$NGINX_PID")
  TLS_URL=https://127.0.0.1:$port/ok
}

[ "$SERVERS" != 1 ] || start_servers
[ "$CLIENTS" != 1 ] || start_client_targets
echo "== $ROUNDS rounds of ${DURATION}s a run; $(nproc) CPUs, $PINNED; client rows against $CLIENT_TARGET; load $LOAD_AT_START"
for round in $(seq "$ROUNDS"); do
  [ "$SERVERS" != 1 ] || server_round "$round"
  [ "$CLIENTS" != 1 ] || client_round "$round"
done

# counts_missing TOOL: why a count cannot be made here ("" when it can).
counts_missing() {
  case $1 in
    valgrind) { have_tool valgrind && have_tool callgrind_control; } || echo "valgrind not installed" ;;
    strace) have_tool strace || echo "neither strace nor perf trace is used here: strace not installed" ;;
  esac
}

# each_peer FN_SERVER FN_CLIENT METRIC WHY: FN over every peer measured,
# or a note per peer saying WHY not.
each_peer() {
  local fs=$1 fc=$2 metric=$3 why=$4 name depth pair scen peer who
  if [ "$SERVERS" = 1 ]; then
    for name in "${SERVER_NAMES[@]}"; do for depth in 1 16; do
      scen=ok; [ "$depth" = 1 ] || scen=ok_pipelined16
      if [ -n "$why" ]; then sample_skip server "$scen" "$name" "$why" "$metric"; else "$fs" "$name" "$depth"; fi
    done; done
  fi
  [ "$CLIENTS" = 1 ] || return 0
  for pair in "${CLIENT_PAIRS[@]}"; do
    read -r scen peer <<<"$pair"
    for who in "${LT_ENGINES[@]}" "$peer"; do
      [ -z "$(client_missing "$who")" ] || continue
      if [ "$scen" = open_loop ] && [ "$metric" = instructions_per_request ]; then
        sample_skip client "$scen" "$who" "not counted: no client holds $RATE req/s under callgrind" "$metric"
      elif [ "$who" = load_tester_io_uring ] && [ "$metric" = instructions_per_request ]; then
        sample_skip client "$scen" "$who" "not counted: valgrind 3.19 hangs in io_uring_enter (load_tester's row is its epoll engine under callgrind)" "$metric"
      elif [ -n "$why" ]; then sample_skip client "$scen" "$who" "$why" "$metric"
      else "$fc" "$scen" "$who"; fi
    done
  done
}

if [ "$COST" = 1 ]; then
  echo "== instructions per request under callgrind"
  why=$(counts_missing valgrind)
  COST_GODEBUG=$([ -n "$why" ] || "$PEERS" godebug)
  each_peer cost_server cost_client instructions_per_request "$why"
fi
if [ "$STRACE" = 1 ]; then
  echo "== system calls per request under strace -c -f"
  each_peer strace_server strace_client syscalls_per_request "$(counts_missing strace)"
fi

cp "$SAMPLES" "$OUT/samples.jsonl"
splice=()
[ "$SPLICE" != 1 ] || splice=(--splice "$ROOT/README.md" --splice "$ROOT/docs/anchors.md")
"$PEERS" table --samples "$SAMPLES" --json "$OUT/peers.json" --md "$OUT/peers.md" --rounds "$ROUNDS" --duration "$DURATION" \
  --client-target "$CLIENT_TARGET" --rate "$RATE" \
  --setup "$PINNED; the plain client rows against $CLIENT_TARGET, HTTPS and h2 against nginx; wrk -t1 -c$CONNS, load_tester 1 network thread × $CONNS connections on each engine (epoll; io_uring); open loop at $RATE req/s; callgrind over $COST_REQUESTS requests at $COST_RATE/s on one connection for a server ($COST_PIPELINED_REQUESTS at $COST_PIPELINED_RATE/s 16 deep), a ${COST_CLIENT_S} s run on $COST_CONNS connections for a client (load_tester on epoll); strace over ${STRACE_S} s runs; load average $LOAD_AT_START at the start." \
  "${splice[@]}"
echo "== wrote $OUT/peers.json and $OUT/peers.md${splice:+, spliced into README.md and docs/anchors.md}"
