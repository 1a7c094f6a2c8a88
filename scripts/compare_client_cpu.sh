#!/usr/bin/env bash
# Client CPU per request of load_tester, before and after a change: builds
# the load_tester of a git ref ("before") and of the working tree ("after"),
# and drives nginx (1 worker, `return 200`, the anchor of docs/anchors.md) with
# each, unpipelined and 16 deep, in interleaved rounds (which build goes
# first alternates by round). nginx runs on the first allowed CPU and both
# clients on the second (taskset), so placement is not part of the
# comparison. Prints each run, each round's after/before ratio of CPU per
# request, and the median ratio per mode.
#
# Usage: scripts/compare_client_cpu.sh [BEFORE_REF] [ROUNDS] [SECONDS]
#   BEFORE_REF  git ref of the "before" build (default e3c9740, the commit
#               before the accounting of issue 12)
#   ROUNDS      interleaved rounds (default 10)
#   SECONDS     length of each run (default 4)
# PIN=0 leaves nginx and the clients to the scheduler.
# CPU per request: user+system CPU of the client process (/usr/bin/time,
# from the kernel's accounting) divided by the responses it reports.
# Needs: go, git, nginx, /usr/bin/time, python3, taskset.
set -euo pipefail

REF=${1:-e3c9740}
ROUNDS=${2:-10}
SECS=${3:-4}
CONNS=100
DEPTH=16
ROOT=$(cd "$(dirname "$0")/.." && pwd)

for tool in go git nginx /usr/bin/time python3 taskset; do
    command -v "$tool" >/dev/null || { echo "compare_client_cpu: $tool not found (apt-get install -y nginx-light time)" >&2; exit 1; }
done

WORK=$(mktemp -d)
NGINX_PID=""
cleanup() {
    if [ -n "$NGINX_PID" ]; then kill "$NGINX_PID" 2>/dev/null || true; wait "$NGINX_PID" 2>/dev/null || true; fi
    rm -rf "$WORK"
}
trap cleanup EXIT INT TERM

# The "before" build from the ref's tree (git archive: no worktree, nothing
# in .git changes), the "after" build from the working tree.
git -C "$ROOT" rev-parse --verify -q "$REF^{commit}" >/dev/null || { echo "compare_client_cpu: $REF is not a commit" >&2; exit 1; }
mkdir -p "$WORK/before-src"
git -C "$ROOT" archive "$REF" | tar -x -C "$WORK/before-src"
(cd "$WORK/before-src" && go build -trimpath -o "$WORK/lt_before" ./cmd/load_tester)
(cd "$ROOT" && go build -trimpath -o "$WORK/lt_after" ./cmd/load_tester)
echo "before: $(git -C "$ROOT" log -1 --format='%h %s' "$REF")"
echo "after:  the working tree ($(git -C "$ROOT" log -1 --format='%h' HEAD)$(git -C "$ROOT" diff --quiet HEAD -- loadtester cmd/load_tester || echo ' + uncommitted changes'))"

# shellcheck source=lib/cpus.sh
. "$ROOT/scripts/lib/cpus.sh"
pin_server_and_client nginx

PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
# shellcheck source=lib/nginx_anchor.sh
. "$ROOT/scripts/lib/nginx_anchor.sh"
write_nginx_conf "$WORK" "$PORT"
start_nginx_anchor "$WORK" "$PORT"

# run BUILD DEPTH: prints "cpu_ns_per_request req_per_s requests"
run() {
    local bin=$WORK/lt_$1 depth=$2
    /usr/bin/time -f 'CPU %U %S' -o "$WORK/time" "${CLIENT_ON[@]}" "$bin" --port "$PORT" --path /ok \
        --concurrency $CONNS --network-threads 1 --pipeline "$depth" --duration "$SECS" \
        --json "$WORK/r.json" --quiet >"$WORK/out" 2>&1 || true
    python3 - "$WORK/r.json" "$(awk '/^CPU/{print $2+$3}' "$WORK/time")" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
n = r["requests"]
print(f"{float(sys.argv[2]) * 1e9 / n if n else 0:.0f} {r['requests_per_sec']:.0f} {n}")
PY
}

echo "nginx 1 worker on 127.0.0.1:$PORT; $ROUNDS rounds of ${SECS}s per build and mode; $(nproc) CPUs, $PINNED; load $(cut -d' ' -f1-3 /proc/loadavg)"
declare -A RATIOS
for round in $(seq "$ROUNDS"); do
    echo "round $round"
    for depth in 1 $DEPTH; do
        order=(before after)
        [ $((round % 2)) = 0 ] && order=(after before)
        declare -A CPU=()
        for build in "${order[@]}"; do
            read -r cpu rps n < <(run "$build" "$depth")
            CPU[$build]=$cpu
            printf '  %-6s pipeline %-3s %8s ns CPU/request  %9s req/s  %s responses\n' "$build" "$depth" "$cpu" "$rps" "$n"
        done
        RATIOS[$depth]+="$(python3 -c "print(${CPU[after]} / ${CPU[before]} if ${CPU[before]} else 0)") "
    done
done

echo
for depth in 1 $DEPTH; do
    python3 - "$depth" ${RATIOS[$depth]} <<'PY'
import statistics, sys
depth, ratios = sys.argv[1], [float(x) for x in sys.argv[2:]]
label = "unpipelined" if depth == "1" else f"pipeline {depth}"
print(f"after/before CPU per request, {label:12s}: rounds {' '.join(f'{r:.3f}' for r in ratios)}"
      f" -> median {statistics.median(ratios):.3f} (bar <= 1.03)")
PY
done
