#!/usr/bin/env bash
# Where the open loop's extra client CPU goes: load_tester against weaseldb
# (testdata/default.toml's shape on a free port, on the first allowed CPU,
# the client on the second, as compare_engines.sh), both engines, with the
# kernel's own counts per answered request taken by `perf stat` on the
# client and, over the same seconds, on the server:
#   cpu_ns    the client's task clock (user + system, every thread)
#   cs        its context switches
#   ipi       inter-processor interrupts it sent (ipi:ipi_send_cpu and
#             ipi:ipi_send_cpumask): a wake-up of a task asleep on the other
#             CPU (the server between requests) costs one, and on loopback
#             the sender's send runs the receiver's TCP receive and wake-up
#   wake      wake-ups it performed (sched:sched_wakeup in its context)
#   sys       system calls it made (raw_syscalls:sys_enter)
#   irq       interrupts that landed while it ran (local timer,
#             reschedule, call-function)
#   srv_ns, srv_cs, srv_ipi   the same three of the server
# Modes: the closed loop with 100 connections (the reference: both sides
# saturated, neither ever sleeps) and with 4 (a closed loop in which the
# server idles between requests), the open loop at each rate, and with
# BUSY=1 the open loop at the last rate again while a second, closed-loop
# load_tester (4 connections, on the server's CPU) keeps the server awake:
# what the open loop costs when its sends never find the server asleep.
# With PROFILE=1, one more run of the closed loop (100) and of the open
# loop at the last rate per engine under `perf record` prints the client's
# top kernel symbols in ns per request.
#
# Usage: scripts/open_loop_attribution.sh [ROUNDS] [SECONDS] [RATES]
#   ROUNDS   interleaved rounds (default 2; the counts vary little)
#   SECONDS  measured seconds of each run after 0.3 s of warm-up (default 2)
#   RATES    comma-separated --rate values (default 10000,25000,50000)
# Needs: go, python3, taskset, perf (root, or perf_event_paranoid ≤ -1 for
# the tracepoints).
set -euo pipefail

ROUNDS=${1:-2}
SECS=${2:-2}
RATES=${3:-10000,25000,50000}
CONNS=100
ROOT=$(cd "$(dirname "$0")/.." && pwd)

# shellcheck source=lib/tools.sh
. "$ROOT/scripts/lib/tools.sh"
# shellcheck source=lib/proc.sh
. "$ROOT/scripts/lib/proc.sh"
need_tools go python3 taskset perf
WORK=$(mktemp -d)
SERVER_PID=""
BG_PID=""
cleanup() {
    for p in "$BG_PID" "$SERVER_PID"; do
        if [ -n "$p" ]; then kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; fi
    done
    rm -rf "$WORK"
}
trap cleanup EXIT INT TERM

(cd "$ROOT" && go build -trimpath -o "$WORK/lt" ./cmd/load_tester && go build -trimpath -o "$WORK/weaseldb" ./cmd/weaseldb)

# shellcheck source=lib/cpus.sh
. "$ROOT/scripts/lib/cpus.sh"
pin_server_and_client weaseldb

PORT=$(free_port)
# shellcheck source=lib/weaseldb.sh
. "$ROOT/scripts/lib/weaseldb.sh"
weaseldb_config "$ROOT/testdata/default.toml" "{ type = \"tcp\", address = \"127.0.0.1\", port = $PORT }" >"$WORK/server.toml"
start_weaseldb "$WORK/weaseldb" "$WORK/server.toml" "$WORK/server.log"
echo "weaseldb on 127.0.0.1:$PORT; $ROUNDS rounds of ${SECS}s; $(nproc) CPUs, $PINNED; load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2), family $(grep -m1 'cpu family' /proc/cpuinfo | cut -d: -f2), kernel $(uname -r)"

EVENTS=task-clock,context-switches,ipi:ipi_send_cpu,ipi:ipi_send_cpumask,sched:sched_wakeup,raw_syscalls:sys_enter
EVENTS+=,irq_vectors:local_timer_entry,irq_vectors:reschedule_entry,irq_vectors:call_function_single_entry
SRV_EVENTS=task-clock,context-switches,ipi:ipi_send_cpu,ipi:ipi_send_cpumask

# args MODE: load_tester flags of a mode (cN: closed loop with N
# connections; rN: open loop at N req/s; bN: rN with the server kept busy)
args() {
    case $1 in
    c*) echo "--concurrency ${1#c}" ;;
    r* | b*) echo "--concurrency $CONNS --rate ${1#?}" ;;
    esac
}

IFS=, read -r -a rate_list <<<"$RATES"
last=${rate_list[${#rate_list[@]} - 1]}
modes=(c100 c4)
for r in "${rate_list[@]}"; do modes+=("r$r"); done
[ "${BUSY:-0}" = 1 ] && modes+=("b$last")

RUNS=$WORK/runs.jsonl
: >"$RUNS"
for ((round = 1; round <= ROUNDS; round++)); do
    engines=(epoll io_uring)
    ((round % 2 == 0)) && engines=(io_uring epoll)
    for mode in "${modes[@]}"; do
        for eng in "${engines[@]}"; do
            if [[ $mode == b* ]]; then # a closed loop on the server's CPU keeps it awake
                "${SERVER_ON[@]}" "$WORK/lt" --port "$PORT" --concurrency 4 --network-threads 1 --duration $((SECS + 3)) --quiet >/dev/null 2>&1 &
                BG_PID=$!
                sleep 0.5
            fi
            rm -f "$WORK/r.json"
            perf stat -x, -o "$WORK/srv.stat" -e "$SRV_EVENTS" -p "$SERVER_PID" >/dev/null 2>&1 &
            srv_perf=$!
            # shellcheck disable=SC2046
            "${CLIENT_ON[@]}" perf stat -x, -o "$WORK/cli.stat" -e "$EVENTS" -- "$WORK/lt" --port "$PORT" --network-threads 1 --warmup 0.3 \
                --duration "$SECS" --io-backend "$eng" $(args "$mode") --quiet --json "$WORK/r.json" >"$WORK/out" 2>&1 || true
            kill -INT "$srv_perf" 2>/dev/null || true
            wait "$srv_perf" 2>/dev/null || true
            if [ -n "$BG_PID" ]; then kill "$BG_PID" 2>/dev/null || true; wait "$BG_PID" 2>/dev/null || true; BG_PID=""; fi
            [ -s "$WORK/r.json" ] || { echo "round $round $eng $mode: no result: $(tail -1 "$WORK/out")" >&2; continue; }
            python3 - "$WORK/r.json" "$WORK/cli.stat" "$WORK/srv.stat" "$eng" "$mode" "$round" >>"$RUNS" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
n = max(r["answered"] + ((r.get("warmup") or {}).get("answered", 0)), 1)
def counts(path):
    out = {}
    for line in open(path):
        f = line.strip().split(",")
        if len(f) > 2 and f[0] and f[0][0].isdigit():
            out[f[2]] = float(f[0])
    return out
c, s = counts(sys.argv[2]), counts(sys.argv[3])
ipi = lambda d: d.get("ipi:ipi_send_cpu", 0) + d.get("ipi:ipi_send_cpumask", 0)
row = {"engine": sys.argv[4], "mode": sys.argv[5], "round": int(sys.argv[6]), "rps": r["requests_per_sec"],
       "p50": r["latency_ns"]["p50"], "p99": r["latency_ns"]["p99"],
       "cpu_ns": c.get("task-clock", 0) * 1e6 / n,  # perf stat -x gives the task clock in ms
       "cs": c.get("context-switches", 0) / n, "ipi": ipi(c) / n, "wake": c.get("sched:sched_wakeup", 0) / n,
       "sys": c.get("raw_syscalls:sys_enter", 0) / n,
       "irq": sum(c.get("irq_vectors:%s_entry" % k, 0) for k in ("local_timer", "reschedule", "call_function_single")) / n,
       "srv_ns": s.get("task-clock", 0) * 1e6 / n,
       "srv_cs": s.get("context-switches", 0) / n, "srv_ipi": ipi(s) / n}
print(json.dumps(row))
print("round %(round)d %(mode)-7s %(engine)-8s %(rps)8.0f req/s  cpu %(cpu_ns)6.0f ns  cs %(cs).3f  ipi %(ipi).3f  wake %(wake).3f  sys %(sys).3f  irq %(irq).3f | server %(srv_ns)6.0f ns  cs %(srv_cs).3f  ipi %(srv_ipi).3f | p50 %(p50)d p99 %(p99)d" % row, file=sys.stderr)
PY
        done
    done
done 2>&1

python3 - "$RUNS" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
med = lambda xs: statistics.median(xs) if xs else float("nan")
keys = ("rps", "cpu_ns", "cs", "ipi", "wake", "sys", "irq", "srv_ns", "srv_cs", "srv_ipi", "p50", "p99")
print("\nmedians per answered request (client task clock ns, counts; server's the same seconds)")
print("%-7s %-8s " % ("mode", "engine") + " ".join("%8s" % k for k in keys) + "  x c100")
for eng in ("epoll", "io_uring"):
    ref = med([r["cpu_ns"] for r in rows if r["engine"] == eng and r["mode"] == "c100"])
    for mode in dict.fromkeys(r["mode"] for r in rows):
        rs = [r for r in rows if r["engine"] == eng and r["mode"] == mode]
        if rs:
            print("%-7s %-8s " % (mode, eng) + " ".join("%8.3f" % med([r[k] for r in rs]) if k in ("cs", "ipi", "wake", "sys", "irq", "srv_cs", "srv_ipi") else "%8.0f" % med([r[k] for r in rs]) for k in keys) + "  %.2f" % (med([r["cpu_ns"] for r in rs]) / ref))
PY

if [ "${PROFILE:-0}" = 1 ]; then
    for eng in epoll io_uring; do
        for mode in c100 "r$last"; do
            rm -f "$WORK/r.json"
            # shellcheck disable=SC2046
            "${CLIENT_ON[@]}" perf record -q -e cpu-clock -F 10000 -o "$WORK/perf.data" -- "$WORK/lt" --port "$PORT" --network-threads 1 --warmup 0.3 \
                --duration "$SECS" --io-backend "$eng" $(args "$mode") --quiet --json "$WORK/r.json" >"$WORK/out" 2>&1 || true
            [ -s "$WORK/r.json" ] || continue
            perf report -i "$WORK/perf.data" --no-children --sort sym --stdio 2>/dev/null >"$WORK/report" || true
            python3 - "$WORK/r.json" "$WORK/report" "$eng" "$mode" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
n = max(r["answered"] + ((r.get("warmup") or {}).get("answered", 0)), 1)
samples = 0
for line in open(sys.argv[2]):
    if line.startswith("# Samples:"):
        v = line.split()[2]
        samples = float(v[:-1]) * 1000 if v.endswith("K") else float(v)
ns_per_req = samples * 100e3 / n  # 10 kHz: 100 µs a sample
print("\n%s %s: %.0f ns sampled per request; top symbols (ns per request)" % (sys.argv[3], sys.argv[4], ns_per_req))
k = 0
for line in open(sys.argv[2]):
    f = line.split()
    if len(f) >= 3 and f[0].endswith("%") and k < 25:
        print("  %7.0f  %s" % (float(f[0][:-1]) / 100 * ns_per_req, " ".join(f[1:])))
        k += 1
PY
        done
    done
fi
