#!/usr/bin/env bash
# Client CPU per request of load_tester's two engines (--io-backend epoll
# and io_uring), built from the working tree, against weaseldb
# (testdata/default.toml's shape on a free port): closed loop unpipelined
# and 16 deep, and the open loop at RATE, in interleaved rounds (which
# engine goes first alternates by round). weaseldb runs on the first
# allowed CPU and the client on the second (taskset; PIN=0: unpinned).
# Prints each run, then per mode the medians of each engine: CPU ns per
# request, voluntary context switches per request (from /usr/bin/time,
# every thread: less sensitive to a busy machine than CPU time), the
# latency's p99 (the open loop's: from each request's due time) and the
# open loop's service time p99 (from its actual send), and io_uring/epoll
# of the CPU. With SYSCALLS=1, one more run per engine and
# mode under `strace -c -f` gives system calls per answered request
# (strace slows the run: its CPU figures are not used).
# With BEFORE_REF=<git ref>, the two contenders are instead one engine
# (ENGINE, default io_uring) in two builds: "before", load_tester built at
# the ref, and "after", the working tree's; the last column is after/before.
#
# Usage: scripts/compare_engines.sh [ROUNDS] [SECONDS] [RATE]
#   ROUNDS   interleaved rounds (default 5)
#   SECONDS  length of each run (default 3)
#   RATE     the open loop's rate in req/s (default 50000)
# Needs: go, python3, taskset, /usr/bin/time (strace with SYSCALLS=1).
set -euo pipefail

ROUNDS=${1:-5}
SECS=${2:-3}
RATE=${3:-50000}
CONNS=100
ROOT=$(cd "$(dirname "$0")/.." && pwd)

WORK=$(mktemp -d)
SERVER_PID=""
cleanup() {
    if [ -n "$SERVER_PID" ]; then kill "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; fi
    rm -rf "$WORK"
}
trap cleanup EXIT INT TERM

(cd "$ROOT" && go build -trimpath -o "$WORK/lt" ./cmd/load_tester && go build -trimpath -o "$WORK/weaseldb" ./cmd/weaseldb)
# contenders: NAME=BINARY:ENGINE, the first the reference of the ratio
if [ -n "${BEFORE_REF:-}" ]; then
    # shellcheck source=lib/build_ref.sh
    . "$ROOT/scripts/lib/build_ref.sh"
    build_at_ref "$BEFORE_REF" "$WORK/before_src" -trimpath -o "$WORK/lt_before" ./cmd/load_tester
    echo "before: $(describe_ref "$BEFORE_REF"); after: $(describe_tree cmd loadtester internal); engine ${ENGINE:-io_uring}"
    contenders=("before=$WORK/lt_before:${ENGINE:-io_uring}" "after=$WORK/lt:${ENGINE:-io_uring}")
else
    contenders=("epoll=$WORK/lt:epoll" "io_uring=$WORK/lt:io_uring")
fi

# shellcheck source=lib/cpus.sh
. "$ROOT/scripts/lib/cpus.sh"
pin_server_and_client weaseldb

# shellcheck source=lib/proc.sh
. "$ROOT/scripts/lib/proc.sh"
# shellcheck source=lib/weaseldb.sh
. "$ROOT/scripts/lib/weaseldb.sh"
PORT=$(free_port)
weaseldb_config "$ROOT/testdata/default.toml" "{ type = \"tcp\", address = \"127.0.0.1\", port = $PORT }" >"$WORK/server.toml"
start_weaseldb "$WORK/weaseldb" "$WORK/server.toml" "$WORK/server.log"
echo "weaseldb on 127.0.0.1:$PORT; $ROUNDS rounds of ${SECS}s; $(nproc) CPUs, $PINNED; load $(cut -d' ' -f1-3 /proc/loadavg)"

# args MODE: the load_tester flags of a mode (1, 16: closed loop depth; rN: open loop at N req/s)
args() {
    case $1 in
    r*) echo "--rate ${1#r}" ;;
    *) echo "--pipeline $1" ;;
    esac
}

RUNS=$WORK/runs.jsonl
: >"$RUNS"
modes=(1 16 "r$RATE")
for ((round = 1; round <= ROUNDS; round++)); do
    order=("${contenders[@]}")
    ((round % 2 == 0)) && order=("${contenders[1]}" "${contenders[0]}")
    for mode in "${modes[@]}"; do
        for contender in "${order[@]}"; do
            name=${contender%%=*} bin=${contender#*=}
            eng=${bin##*:} bin=${bin%:*}
            rm -f "$WORK/r.json"
            # shellcheck disable=SC2046
            "${CLIENT_ON[@]}" /usr/bin/time -o "$WORK/time" -f '%w' "$bin" --port "$PORT" --concurrency $CONNS --network-threads 1 --warmup 0.5 \
                --duration "$SECS" --io-backend "$eng" $(args "$mode") --quiet --json "$WORK/r.json" >"$WORK/out" 2>&1 || true
            [ -s "$WORK/r.json" ] || { echo "round $round $name $mode: no result: $(tail -1 "$WORK/out")" >&2; continue; }
            python3 - "$WORK/r.json" "$name" "$mode" "$round" "$WORK/time" >>"$RUNS" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
n = r["answered"] + ((r.get("warmup") or {}).get("answered", 0))
vol = int(open(sys.argv[5]).read().split()[-1])
row = {"engine": sys.argv[2], "ran": r.get("io_backend"), "mode": sys.argv[3], "round": int(sys.argv[4]),
       "rps": r["requests_per_sec"], "cpu_ns": r["client_cpu_ns_per_request"], "p99": r["latency_ns"]["p99"],
       "svc99": (r.get("service_latency_ns") or {}).get("p99", 0), "cs": vol / max(n, 1)}
print(json.dumps(row))
print("round %(round)d %(mode)-7s %(engine)-8s (ran %(ran)s): %(rps)8.0f req/s, %(cpu_ns)6.0f ns CPU/request, %(cs).3f context switches/request, p99 %(p99)d ns, service p99 %(svc99)d ns" % row, file=sys.stderr)
PY
        done
    done
done 2>&1

python3 - "$RUNS" "${contenders[0]%%=*}" "${contenders[1]%%=*}" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
first, second = sys.argv[2], sys.argv[3]
med = lambda xs: statistics.median(xs) if xs else float("nan")
print("\nmedians: CPU ns per request, context switches per request, p99 and service p99 (ns)")
for mode in dict.fromkeys(r["mode"] for r in rows):
    # a run with no answers (the server or the machine stalled) has no CPU per request
    of = lambda eng, key: med([r[key] for r in rows if r["mode"] == mode and r["engine"] == eng and r["cpu_ns"] > 0])
    e, u = of(first, "cpu_ns"), of(second, "cpu_ns")
    # each round's ratio too: the two ran back to back, so drift cancels
    rounds = {r["round"] for r in rows if r["mode"] == mode}
    ratios = [b / a for n in rounds for a, b in [(
        med([r["cpu_ns"] for r in rows if r["mode"] == mode and r["round"] == n and r["engine"] == first and r["cpu_ns"] > 0]),
        med([r["cpu_ns"] for r in rows if r["mode"] == mode and r["round"] == n and r["engine"] == second and r["cpu_ns"] > 0]))]
        if a == a and b == b]
    print("%-8s %s %6.0f (%.3f cs, p99 %.0f, svc %.0f)  %s %6.0f (%.3f cs, p99 %.0f, svc %.0f)  %s/%s %.3f (median of rounds' ratios %.3f)" % (
        mode, first, e, of(first, "cs"), of(first, "p99"), of(first, "svc99"),
        second, u, of(second, "cs"), of(second, "p99"), of(second, "svc99"), second, first, u / e if e else float("nan"), med(ratios)))
PY

if [ "${SYSCALLS:-0}" = 1 ]; then
    echo
    echo "system calls per answered request (strace -c -f, one run each)"
    for mode in "${modes[@]}"; do
        for eng in epoll io_uring; do
            rm -f "$WORK/r.json"
            # shellcheck disable=SC2046
            strace -c -f -o "$WORK/strace" "$WORK/lt" --port "$PORT" --concurrency $CONNS --network-threads 1 --warmup 0 \
                --duration "$SECS" --io-backend "$eng" $(args "$mode") --quiet --json "$WORK/r.json" >"$WORK/out" 2>&1 || true
            python3 - "$WORK/r.json" "$WORK/strace" "$eng" "$mode" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
n = r["answered"] + ((r.get("warmup") or {}).get("answered", 0))
calls, top = 0, []
for line in open(sys.argv[2]):
    f = line.split()
    if len(f) >= 5 and f[0][0].isdigit() and f[-1] != "total":
        c = int(f[3]); calls += c; top.append((c, f[-1]))
top.sort(reverse=True)
print("%-8s %-8s %.3f calls/request  (%s)" % (sys.argv[4], sys.argv[3], calls / max(n, 1),
      ", ".join("%s %.3f" % (name, c / max(n, 1)) for c, name in top[:4])))
PY
        done
    done
fi
