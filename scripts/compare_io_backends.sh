#!/usr/bin/env bash
# The same weaseldb binary on each event-loop backend (server.io_backend =
# epoll | io_uring), interleaved in one run: GET /ok req/s and the server's
# CPU per request, unpipelined (load_tester and wrk, 100 connections) and 16
# deep (load_tester); then, in a separate short run each, the server's
# system calls per request (strace -c -f) and its idle CPU with 10,000 idle
# connections. docs/io_uring.md says what was measured with it.
#
# One I/O loop, WaitIfStageEmpty (the shared-core design), the server on
# SERVER_CPU and the load generator on CLIENT_CPU (taskset). Three variants
# alternate, in a rotating order: epoll as configured by default (the loop
# goroutine not locked to a thread), epoll with the loop pinned to
# SERVER_CPU (io_cpus: locked to its thread, as io_uring's loop must be;
# only when SERVER_CPU is one CPU), and io_uring. Prints a line per run and
# the medians with io_uring's ratio to each epoll variant.
#
# Knobs (environment; defaults in brackets): BUILD_DIR [build]  PAIRS [6]
#   DURATION [5] seconds of load per run after WARMUP [1]  OUT [stdout]
#   SKIP_STRACE [0]  SKIP_IDLE [0]  SERVER_CPU [0]  CLIENT_CPU [1]
#   THREAD_NAMES [unset: the server's "auto", the epoll loop unlocked, as
#   measured in docs/io_uring.md; io_uring loops are locked either way]
#   URING_PEEK_NS, URING_BUDGET [unset]: add the variants io_uring_peek
#   (server.io_uring_peek_ns) and io_uring_budget
#   (server.io_uring_round_budget), each also given as its ratio to io_uring
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
BUILD_DIR=${BUILD_DIR:-build}
PAIRS=${PAIRS:-6}
DURATION=${DURATION:-5}
WARMUP=${WARMUP:-1}
SERVER_CPU=${SERVER_CPU:-0}
CLIENT_CPU=${CLIENT_CPU:-1}
BIN=$(cd "$BUILD_DIR" && pwd)
for b in weaseldb load_tester; do [[ -x $BIN/$b ]] || { echo "compare_io_backends: $BIN/$b missing (make build)" >&2; exit 1; }; done
# shellcheck source=lib/tools.sh
. "$ROOT/scripts/lib/tools.sh"
need_tool python3
HAVE_WRK=0; have_tool wrk && HAVE_WRK=1
TMP=$(mktemp -d)
PORT=18200
SERVER_PID=
cleanup() { [[ -n $SERVER_PID ]] && kill -TERM "$SERVER_PID" 2>/dev/null; wait 2>/dev/null; rm -rf "$TMP"; }
trap cleanup EXIT

config() { # variant backend [extra line]
    cat >"$TMP/$1.toml" <<EOF
[server]
io_threads = 1
io_backend = "$2"
${THREAD_NAMES:+thread_names = $THREAD_NAMES}
interfaces = [{ type = "tcp", address = "127.0.0.1", port = $PORT }]
max_connections = 20000
${3:-}
[commit]
pipeline_wait_strategy = "WaitIfStageEmpty"
EOF
}
config epoll epoll
config io_uring io_uring
VARIANTS=(epoll io_uring)
if [[ $SERVER_CPU =~ ^[0-9]+$ ]]; then
    config epoll_pinned epoll "io_cpus = [$SERVER_CPU]"
    VARIANTS=(epoll epoll_pinned io_uring)
fi
if [[ -n ${URING_PEEK_NS:-} ]]; then
    config io_uring_peek io_uring "io_uring_peek_ns = $URING_PEEK_NS"
    VARIANTS+=(io_uring_peek)
fi
if [[ -n ${URING_BUDGET:-} ]]; then
    config io_uring_budget io_uring "io_uring_round_budget = $URING_BUDGET"
    VARIANTS+=(io_uring_budget)
fi
backend_of() { case $1 in epoll*) echo epoll ;; *) echo io_uring ;; esac; }

start() { # variant [wrapper...]
    local variant=$1; shift
    rm -f "$TMP/server.log" # the last server's "ready" must not pass for this one's
    "$@" taskset -c "$SERVER_CPU" "$BIN/weaseldb" --config "$TMP/$variant.toml" >"$TMP/server.log" 2>&1 &
    SERVER_PID=$!
    for _ in $(seq 100); do grep -q 'weaseldb: ready' "$TMP/server.log" 2>/dev/null && break; sleep 0.05; done
    grep -q "io_backend $(backend_of "$variant")" "$TMP/server.log" || { echo "compare_io_backends: $variant did not start:" >&2; cat "$TMP/server.log" >&2; exit 1; }
}
stop() { kill -TERM "$SERVER_PID" 2>/dev/null; wait "$SERVER_PID" 2>/dev/null || true; SERVER_PID=; }
cpu_ticks() { awk '{print $14+$15}' "/proc/$1/stat"; } # the whole process, user+system
TICK=$(getconf CLK_TCK)

# answered LT_JSON [FIELD]: the requests load_tester's run answered, its
# warm-up's included (a run with --warmup 0 has no "warmup"), and FIELD.
answered() {
    python3 - "$@" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
out = [r["requests"] + (r.get("warmup") or {}).get("answered", 0)]
print(*(out + [r[f] for f in sys.argv[2:]]))
PY
}

# run VARIANT TOOL PIPELINE: prints "rps ns_per_request". Called in this
# shell, never in a subshell: SERVER_PID must be this shell's, so that the
# exit trap stops a server whatever ends the script.
run() {
    local variant=$1 tool=$2 depth=$3
    start "$variant"
    local pid t0 t1 reqs rps
    pid=$(pgrep -P "$SERVER_PID" weaseldb || echo "$SERVER_PID")
    if [[ $tool == wrk ]]; then
        taskset -c "$CLIENT_CPU" wrk -t1 -c100 -d"${WARMUP}s" "http://127.0.0.1:$PORT/ok" >/dev/null
        t0=$(cpu_ticks "$pid")
        taskset -c "$CLIENT_CPU" wrk -t1 -c100 -d"${DURATION}s" "http://127.0.0.1:$PORT/ok" >"$TMP/wrk.txt"
        t1=$(cpu_ticks "$pid")
        reqs=$(awk '/requests in/ {print $1}' "$TMP/wrk.txt")
        rps=$(awk '/Requests\/sec/ {print $2}' "$TMP/wrk.txt")
    else
        t0=$(cpu_ticks "$pid")
        taskset -c "$CLIENT_CPU" "$BIN/load_tester" --host 127.0.0.1 --port "$PORT" --path /ok --concurrency 100 \
            --pipeline "$depth" --duration "$DURATION" --warmup "$WARMUP" --quiet --json "$TMP/lt.json" >/dev/null
        t1=$(cpu_ticks "$pid")
        read -r reqs rps < <(answered "$TMP/lt.json" requests_per_sec)
    fi
    stop
    python3 -c "print('%.0f %.0f' % ($rps, ($t1-$t0)/$TICK*1e9/max(1,$reqs)))"
}

echo "# compare_io_backends: $(date -u +%FT%TZ), $(nproc) CPUs, $(uname -r), server on CPU $SERVER_CPU, client on CPU $CLIENT_CPU, $PAIRS pairs of ${DURATION}s"
declare -A RPS NS
shapes=("load_tester 1" "load_tester 16")
((HAVE_WRK)) && shapes+=("wrk 1")
for shape in "${shapes[@]}"; do
    read -r tool depth <<<"$shape"
    for i in $(seq "$PAIRS"); do
        n=${#VARIANTS[@]}
        for ((k = 0; k < n; k++)); do # the order rotates from round to round
            b=${VARIANTS[$(((i + k) % n))]}
            run "$b" "$tool" "$depth" >"$TMP/run.out"
            read -r rps ns <"$TMP/run.out"
            echo "$tool depth=$depth round=$i $b: $rps req/s, $ns ns server CPU per request"
            RPS[$tool.$depth.$b]+="$rps "
            NS[$tool.$depth.$b]+="$ns "
        done
    done
done
echo "# medians, and io_uring's ratio to each epoll variant (median of the per-round ratios)"
for shape in "${shapes[@]}"; do
    read -r tool depth <<<"$shape"
    args=("$tool depth=$depth")
    for b in "${VARIANTS[@]}"; do args+=("$b" "${RPS[$tool.$depth.$b]}" "${NS[$tool.$depth.$b]}"); done
    python3 - "${args[@]}" <<'PY'
import statistics, sys
name, rest = sys.argv[1], sys.argv[2:]
runs = {rest[i]: ([float(x) for x in rest[i + 1].split()], [float(x) for x in rest[i + 2].split()]) for i in range(0, len(rest), 3)}
parts = [f"{b} {statistics.median(r):.0f} req/s, {statistics.median(n):.0f} ns/req" for b, (r, n) in runs.items()]
print(f"{name}: " + "; ".join(parts))
def ratio(top, base):
    (br, bn), (tr, tn) = runs[base], runs[top]
    over = lambda bs, ts: statistics.median([t / b if b else float("nan") for b, t in zip(bs, ts)])
    pr, pn = over(br, tr), over(bn, tn)
    print(f"  {top} / {base}: req/s {pr:.3f}, server CPU per request {pn:.3f}")
for b in runs:
    if b.startswith("epoll"):
        ratio("io_uring", b)
for b in runs:
    if b.startswith("io_uring_"):
        ratio(b, "io_uring")
PY
done

if [[ ${SKIP_STRACE:-0} == 0 ]] && have_tool strace; then
    echo "# system calls per request (strace -c -f; 3 s of load_tester, 100 connections, unpipelined; strace slows everything, so only the counts mean anything)"
    for b in "${VARIANTS[@]}"; do
        start "$b" strace -f -c -o "$TMP/strace.$b"
        "$BIN/load_tester" --host 127.0.0.1 --port "$PORT" --path /ok --concurrency 100 --duration 3 --warmup 0.5 --quiet --json "$TMP/lt.json" >/dev/null
        reqs=$(answered "$TMP/lt.json")
        pkill -TERM -f "weaseldb --config $TMP/$b.toml" || true
        wait "$SERVER_PID" 2>/dev/null || true; SERVER_PID=
        awk -v n="$reqs" -v b="$b" 'NR>2 && $NF!="total" && $4 ~ /^[0-9]+$/ && $4/n >= 0.01 {printf "%s: %-16s %.3f per request\n", b, $NF, $4/n}' "$TMP/strace.$b" | sort -t' ' -k3 -rn
    done
fi

if [[ ${SKIP_IDLE:-0} == 0 ]]; then
    echo "# idle CPU with 10,000 idle keep-alive connections (10 s)"
    for b in "${VARIANTS[@]}"; do
        start "$b"
        python3 - "$PORT" "$SERVER_PID" "$TICK" "$b" <<'PY'
import socket, sys, time, resource
port, pid, tick, backend = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
resource.setrlimit(resource.RLIMIT_NOFILE, (20000, 20000))
conns = []
for _ in range(10000):
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(b"GET /ok HTTP/1.1\r\nHost: x\r\n\r\n")
    conns.append(s)
for s in conns:
    s.recv(4096)
def ticks():
    f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return int(f[11]) + int(f[12])
time.sleep(1)
t0, w0 = ticks(), time.time()
time.sleep(10)
t1, w1 = ticks(), time.time()
print(f"{backend}: {(t1 - t0) / tick / (w1 - w0) * 100:.2f}% of a core with {len(conns)} idle connections")
PY
        stop
    done
fi
