#!/usr/bin/env bash
# What the open loop costs the client: load_tester's CPU per request at
# --rate R next to the closed loop's, for a "before" build (a git ref) and
# the working tree, against weaseldb (testdata/default.toml's shape: one I/O
# loop, WaitIfStageEmpty; a loopback port of its own). The server runs on
# the first allowed CPU and every client on the second (taskset), as in
# docs/load_tester.md. Runs are interleaved: each round runs every build at
# every rate and in the closed loop, the order rotating by round, so drift
# on a busy machine hits all alike.
#
# Prints each run (CPU per request from the load tester's JSON, which takes
# it from getrusage over the window and drain; voluntary context switches
# per request from /usr/bin/time, which sums every thread), then per build
# and rate the medians, the ratio of CPU per request to the same build's
# closed loop, the rate achieved over the rate asked, and in how many runs
# the client was flagged client-bound.
#
# Usage: scripts/open_loop_cpu.sh [BEFORE_REF] [ROUNDS] [SECONDS] [RATES]
#   BEFORE_REF  git ref of the "before" build (default HEAD)
#   ROUNDS      interleaved rounds (default 5)
#   SECONDS     measured seconds of each run, after 0.5 s of warm-up (default 3)
#   RATES       comma-separated --rate values (default 1000,10000,50000)
# Env: CONNS [100], PIN [1], EXTRA_AFTER (more flags for the working tree's
# open-loop runs; its closed loop stays the reference), e.g. "--send-slack 100us" or "--arrival poisson --check status==200"),
# AFTER_RAMP [0] (1: the working tree's open-loop runs ramp instead, with
# --stages from R/2 to 3R/2 over the measured seconds, whose mean is R,
# after a warm-up stage from 0 to R/2: what a ramp costs per request).
# Needs: go, git, python3, taskset, /usr/bin/time.
set -euo pipefail

REF=${1:-HEAD}
ROUNDS=${2:-5}
SECS=${3:-3}
RATES=${4:-1000,10000,50000}
CONNS=${CONNS:-100}
EXTRA_AFTER=${EXTRA_AFTER:-}
ROOT=$(cd "$(dirname "$0")/.." && pwd)

# shellcheck source=lib/tools.sh
. "$ROOT/scripts/lib/tools.sh"
# shellcheck source=lib/build_ref.sh
. "$ROOT/scripts/lib/build_ref.sh"
# shellcheck source=lib/proc.sh
. "$ROOT/scripts/lib/proc.sh"
need_tools go git python3 taskset /usr/bin/time
WORK=$(mktemp -d)
SERVER_PID=""
cleanup() {
    if [ -n "$SERVER_PID" ]; then kill "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; fi
    rm -rf "$WORK"
}
trap cleanup EXIT INT TERM

build_at_ref "$REF" "$WORK/before-src" -trimpath -o "$WORK/lt_before" ./cmd/load_tester
(cd "$ROOT" && go build -trimpath -o "$WORK/lt_after" ./cmd/load_tester && go build -trimpath -o "$WORK/weaseldb" ./cmd/weaseldb)
echo "before: $(describe_ref "$REF")"
echo "after:  the working tree$(git -C "$ROOT" diff --quiet HEAD -- loadtester cmd/load_tester || echo ' (uncommitted changes)') $EXTRA_AFTER"

# shellcheck source=lib/cpus.sh
. "$ROOT/scripts/lib/cpus.sh"
pin_server_and_client weaseldb
[ "$PINNED" = unpinned ] || echo "$PINNED"

# shellcheck source=lib/weaseldb.sh
. "$ROOT/scripts/lib/weaseldb.sh"
PORT=$(free_port)
weaseldb_config "$ROOT/testdata/default.toml" "{ type = \"tcp\", address = \"127.0.0.1\", port = $PORT }" >"$WORK/server.toml"
start_weaseldb "$WORK/weaseldb" "$WORK/server.toml" "$WORK/server.log"

RUNS=$WORK/runs.jsonl
: >"$RUNS"
IFS=, read -r -a rate_list <<<"$RATES"
variants=()
for b in before after; do
    variants+=("$b 0")
    for r in "${rate_list[@]}"; do variants+=("$b $r"); done
done
n=${#variants[@]}
for ((round = 1; round <= ROUNDS; round++)); do
    for ((i = 0; i < n; i++)); do
        read -r build rate <<<"${variants[$(((i + round - 1) % n))]}"
        args=(--port "$PORT" --concurrency "$CONNS" --warmup 0.5 --quiet --json "$WORK/r.json")
        if ((rate > 0)) && [ "$build" = after ] && [ "${AFTER_RAMP:-0}" = 1 ]; then
            args+=(--stages "0.5s:$((rate / 2)),${SECS}s:$((3 * rate / 2))")
        else
            args+=(--duration "$SECS")
            ((rate > 0)) && args+=(--rate "$rate")
        fi
        # shellcheck disable=SC2206
        [ "$build" = after ] && ((rate > 0)) && args+=($EXTRA_AFTER)
        rm -f "$WORK/r.json"
        "${CLIENT_ON[@]}" /usr/bin/time -o "$WORK/time" -f '%w %c' "$WORK/lt_$build" "${args[@]}" >"$WORK/out" 2>&1 || true
        if [ ! -s "$WORK/r.json" ]; then # a run that wrote no result is reported, never read from a stale file
            echo "round $round $build rate $rate: no result: $(tail -1 "$WORK/out")" >&2
            continue
        fi
        python3 - "$WORK/r.json" "$WORK/time" "$build" "$rate" "$round" >>"$RUNS" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
vol, invol = (int(x) for x in open(sys.argv[2]).read().split()[-2:])
n = r["answered"] + ((r.get("warmup") or {}).get("answered", 0))
row = {"build": sys.argv[3], "rate": float(sys.argv[4]), "round": int(sys.argv[5]), "rps": r["requests_per_sec"],
       "cpu_ns": r["client_cpu_ns_per_request"], "cs": vol / max(n, 1), "bound": r["client_bound"],
       "p50": r["latency_ns"]["p50"], "p99": r["latency_ns"]["p99"], "dropped": r["dropped"], "unfinished": r["unfinished"]}
print(json.dumps(row))
print("round %(round)d %(build)-6s rate %(rate)6.0f: %(rps)8.0f req/s, %(cpu_ns)6.0f ns CPU/request, %(cs).3f context switches/request, p50 %(p50)d ns, p99 %(p99)d ns, client-bound %(bound)s" % row, file=sys.stderr)
PY
    done
done 2>&1

python3 - "$RUNS" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
med = lambda xs: statistics.median(xs) if xs else float("nan")
print("\nmedians (%d rounds)" % max(r["round"] for r in rows))
print("%-6s %8s %10s %12s %14s %12s %14s %12s" % ("build", "rate", "req/s", "CPU ns/req", "x closed loop", "ctx sw/req", "achieved/asked", "client-bound"))
for build in ("before", "after"):
    closed = med([r["cpu_ns"] for r in rows if r["build"] == build and r["rate"] == 0])
    for rate in sorted({r["rate"] for r in rows}):
        rs = [r for r in rows if r["build"] == build and r["rate"] == rate]
        cpu = med([r["cpu_ns"] for r in rs])
        ach = "-" if rate == 0 else "%.4f" % med([r["rps"] / rate for r in rs])
        print("%-6s %8s %10.0f %12.0f %14.2f %12.3f %14s %9d of %d" % (build, "closed" if rate == 0 else "%.0f" % rate,
              med([r["rps"] for r in rs]), cpu, cpu / closed, med([r["cs"] for r in rs]), ach, sum(r["bound"] for r in rs), len(rs)))
for rate in sorted({r["rate"] for r in rows} - {0}):
    ratios = []
    for rd in sorted({r["round"] for r in rows}):
        b = [r["cpu_ns"] for r in rows if r["build"] == "before" and r["rate"] == rate and r["round"] == rd]
        a = [r["cpu_ns"] for r in rows if r["build"] == "after" and r["rate"] == rate and r["round"] == rd]
        if a and b:
            ratios.append(a[0] / b[0])
    print("after/before CPU per request at rate %.0f: rounds %s -> median %.3f" % (rate, " ".join("%.2f" % x for x in ratios), med(ratios)))
PY
