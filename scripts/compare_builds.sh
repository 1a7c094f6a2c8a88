#!/usr/bin/env bash
# GET /ok req/s of two weaseldb variants, side by side: A and B alternate in
# every round (who goes first alternates too), unpipelined and 16 deep, the
# server pinned to one CPU and wrk to another; it prints each round, the
# median of the per-round B/A ratios and the ratio of the medians, for req/s,
# for the server's CPU time per request (utime+stime from /proc/PID/stat over
# each wrk run) and for its context switches per request (all its threads',
# /proc/PID/task/*/status). This is the before/after comparison a hot-path
# change comes with.
#
# A variant is a binary (A_BIN/B_BIN), or a git ref built from its tree
# (git archive) in a temporary directory (A_REF/B_REF), plus TOML lines added to its [server] section
# (A_SERVER/B_SERVER). By default A is HEAD and B the working tree.
#
# Examples:
#   A_REF=3a77767 scripts/compare_builds.sh                  # before/after a change
#   A_SERVER='header_timeout_seconds = 0
#   body_timeout_seconds = 0
#   idle_timeout_seconds = 0
#   write_timeout_seconds = 0' scripts/compare_builds.sh     # timeouts off (A) vs on (B)
#
# Env: ROUNDS=9 DURATION=3 (seconds per run) CONNS=100 DEPTH=16 PIN=1
#      WAIT_STRATEGY=WaitIfStageEmpty FRESH=0 (1: start both servers afresh
#      every round, for what changes from one process start to the next)
#      THREAD_NAMES=false (server.thread_names for both, so that a build from
#      the days names were the default (true) compares like for like; the
#      server's default is now "auto", the same as false where nothing is
#      pinned; a variant whose *_SERVER names the key, even in a comment
#      such as '# thread_names: default', or whose build predates the key,
#      is left as it is)
set -euo pipefail

ROUNDS=${ROUNDS:-9}
DURATION=${DURATION:-3}
CONNS=${CONNS:-100}
DEPTH=${DEPTH:-16}
PIN=${PIN:-1}
FRESH=${FRESH:-0}
THREAD_NAMES=${THREAD_NAMES:-false}
WAIT_STRATEGY=${WAIT_STRATEGY:-WaitIfStageEmpty}
ROOT=$(cd "$(dirname "$0")/.." && pwd)

# shellcheck source=lib/tools.sh
. "$ROOT/scripts/lib/tools.sh"
# shellcheck source=lib/build_ref.sh
. "$ROOT/scripts/lib/build_ref.sh"
# shellcheck source=lib/proc.sh
. "$ROOT/scripts/lib/proc.sh"
# shellcheck source=lib/stats.sh
. "$ROOT/scripts/lib/stats.sh"
need_tools wrk go python3

WORK=$(mktemp -d /tmp/compare_builds.XXXXXX)
PIDS=()
cleanup() {
    for p in "${PIDS[@]:-}"; do [ -n "$p" ] && kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$WORK"
}
trap cleanup EXIT INT TERM

# build NAME REF: the weaseldb of REF ("" = the working tree) into $WORK/NAME.
build() {
    local name=$1 ref=$2
    if [ -n "$ref" ]; then
        build_at_ref "$ref" "$WORK/src-$name" -trimpath -o "$WORK/$name" ./cmd/weaseldb
    else
        (cd "$ROOT" && go build -trimpath -o "$WORK/$name" ./cmd/weaseldb)
    fi
    echo "   $name: $( [ -n "$ref" ] && describe_ref "$ref" | cut -c1-70 || echo 'working tree')"
}

echo "== building"
if [ -n "${A_BIN:-}" ]; then cp "$A_BIN" "$WORK/A"; echo "   A: $A_BIN"; else build A "${A_REF:-HEAD}"; fi
if [ -n "${B_BIN:-}" ]; then cp "$B_BIN" "$WORK/B"; echo "   B: $B_BIN"; else build B "${B_REF:-}"; fi

# shellcheck source=lib/cpus.sh
. "$ROOT/scripts/lib/cpus.sh"
pin_server_and_client servers
echo "   $PINNED$( [ ${#SERVER_ON[@]} = 0 ] && echo " (PIN=$PIN, or fewer than 2 CPUs allowed)")"

# shellcheck source=lib/wrk.sh
. "$ROOT/scripts/lib/wrk.sh"
write_pipeline_lua "$WORK/pipeline.lua" "$DEPTH"

declare -A PORT SPID
for v in A B; do
    PORT[$v]=$(free_port)
    extra_var=${v}_SERVER
    names_line=""
    # A build from before the key existed would refuse it; one whose own
    # lines set it keeps theirs.
    if grep -aq 'thread_names' "$WORK/$v" && ! grep -q 'thread_names' <<<"${!extra_var:-}"; then
        names_line="thread_names = $THREAD_NAMES"
    fi
    cat >"$WORK/$v.toml" <<TOML
[server]
interfaces = [{ type = "tcp", address = "127.0.0.1", port = ${PORT[$v]} }]
io_threads = 1
$names_line
${!extra_var:-}
[commit]
pipeline_wait_strategy = "$WAIT_STRATEGY"
pipeline_release_threads = 1
TOML
done

start_servers() {
    for v in A B; do
        "${SERVER_ON[@]}" "$WORK/$v" --config "$WORK/$v.toml" >"$WORK/$v.log" 2>&1 &
        PIDS+=($!)
        SPID[$v]=$!
    done
    for v in A B; do
        for _ in $(seq 100); do
            grep -q "weaseldb: ready" "$WORK/$v.log" 2>/dev/null && break
            sleep 0.1
        done
        grep -q "weaseldb: ready" "$WORK/$v.log" || { echo "compare_builds: server $v did not start:" >&2; tail -5 "$WORK/$v.log" >&2; exit 1; }
    done
}

stop_servers() {
    for v in A B; do kill "${SPID[$v]}" 2>/dev/null || true; wait "${SPID[$v]}" 2>/dev/null || true; done
    PIDS=()
}

# cputicks PID: the process's user+system CPU time, in clock ticks.
cputicks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
# switches PID: context switches (voluntary and not) of the process's threads.
switches() { cat /proc/"$1"/task/*/status 2>/dev/null | awk '/ctxt_switches/ {s += $2} END {print s + 0}'; }
TICK=$(getconf CLK_TCK)

run() { # run VARIANT MODE -> "req/s cpu-µs-per-request switches-per-request"
    local args=() before after sw0 sw1 out
    [ "$2" = pipelined ] && args=(-s "$WORK/pipeline.lua")
    before=$(cputicks "${SPID[$1]}"); sw0=$(switches "${SPID[$1]}")
    out=$("${CLIENT_ON[@]}" wrk -t1 -c"$CONNS" -d"${DURATION}s" "${args[@]}" "http://127.0.0.1:${PORT[$1]}/ok")
    after=$(cputicks "${SPID[$1]}"); sw1=$(switches "${SPID[$1]}")
    awk -v b="$before" -v a="$after" -v tick="$TICK" -v s0="$sw0" -v s1="$sw1" '
        /Requests\/sec/ {rps = $2}
        /requests in/ {n = $1}
        END {printf "%s %.3f %.4f\n", rps, (a - b) * 1e6 / tick / n, (s1 - s0) / n}' <<<"$out"
}

echo "== $ROUNDS rounds of ${DURATION}s per run, wrk -t1 -c$CONNS, unpipelined and $DEPTH deep$( [ "$FRESH" = 1 ] && echo ', fresh servers every round')"
: >"$WORK/results"
if [ "$FRESH" != 1 ]; then start_servers; fi
for r in $(seq 1 "$ROUNDS"); do
    if [ "$FRESH" = 1 ]; then start_servers; fi
    for mode in unpipelined pipelined; do
        order=(A B); [ $((r % 2)) = 0 ] && order=(B A)
        declare -A rps=() cpu=() sw=()
        for v in "${order[@]}"; do read -r "rps[$v]" "cpu[$v]" "sw[$v]" < <(run "$v" "$mode"); done
        echo "$mode ${rps[A]} ${rps[B]} ${cpu[A]} ${cpu[B]} ${sw[A]} ${sw[B]}" >>"$WORK/results"
        printf '   round %2d %-11s A %12s  B %12s  B/A %.3f   CPU µs/req A %6s  B %6s  B/A %.3f   switches/req A %s  B %s\n' "$r" "$mode" \
            "${rps[A]}" "${rps[B]}" "$(ratio "${rps[B]}" "${rps[A]}" %.6f)" \
            "${cpu[A]}" "${cpu[B]}" "$(ratio "${cpu[B]}" "${cpu[A]}" %.6f)" "${sw[A]}" "${sw[B]}"
    done
    if [ "$FRESH" = 1 ]; then stop_servers; fi
done

python3 - "$WORK/results" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    mode, *vals = line.split()
    ra, rb, ca, cb, sa, sb = map(float, vals)
    rows.setdefault((mode, "req/s"), []).append((ra, rb))
    rows.setdefault((mode, "CPU µs/req"), []).append((ca, cb))
    rows.setdefault((mode, "switches/req"), []).append((sa, sb))
print("== summary")
for (mode, what), pairs in rows.items():
    a = [p[0] for p in pairs]; b = [p[1] for p in pairs]
    ratios = sorted(p[1] / p[0] if p[0] else float("inf") for p in pairs)
    print(f"   {mode:11s} {what:12s} median A {statistics.median(a):10.3f}  median B {statistics.median(b):10.3f}  "
          f"ratio of medians {statistics.median(b)/statistics.median(a):.3f}  "
          f"median per-round B/A {statistics.median(ratios):.3f} (range {ratios[0]:.3f}-{ratios[-1]:.3f}, {len(ratios)} rounds)")
PY
