#!/usr/bin/env bash
# Client CPU per request of load_tester over HTTP/2 (h2c), before and after
# a change, and what rendering requests costs: builds the load_tester of a
# git ref ("before") and of the working tree ("after"), starts the nginx
# anchor (1 worker, `return 200`, docs/anchors.md) listening for h2c, and
# in interleaved rounds (which goes first alternates by round) runs
#   before/static    the one static request (its header block encoded once)
#   after/static     the same, with the working tree's build
#   after/rendered   the working tree's build with placeholders in the path
#                    and a header (--path '/ok?s={{seq}}' --header
#                    'X-Id: {{uuid}}'): every request rendered and its
#                    header block encoded
# each with --concurrency 10 --streams 10 on one network thread. nginx runs
# on the first allowed CPU and the clients on the second (taskset). Prints
# each run, each round's after/before ratio (static) and rendered/static
# ratio (after), and their medians.
#
# Usage: scripts/compare_h2_client_cpu.sh [BEFORE_REF] [ROUNDS] [SECONDS]
#   BEFORE_REF  git ref of the "before" build (default e0df803, before
#               HTTP/2 rendered requests)
#   ROUNDS      interleaved rounds (default 6)
#   SECONDS     length of each run (default 3)
# PIN=0 leaves nginx and the clients to the scheduler.
# CPU per request: user+system CPU of the client process (/usr/bin/time)
# divided by the responses it reports.
# Needs: go, git, nginx (with the http2 module: nginx-light has it),
# /usr/bin/time, python3, taskset.
set -euo pipefail

REF=${1:-e0df803}
ROUNDS=${2:-6}
SECS=${3:-3}
ROOT=$(cd "$(dirname "$0")/.." && pwd)

for tool in go git nginx /usr/bin/time python3 taskset; do
    command -v "$tool" >/dev/null || { echo "compare_h2_client_cpu: $tool not found (apt-get install -y nginx-light time)" >&2; exit 1; }
done

WORK=$(mktemp -d)
NGINX_PID=""
cleanup() {
    if [ -n "$NGINX_PID" ]; then kill "$NGINX_PID" 2>/dev/null || true; wait "$NGINX_PID" 2>/dev/null || true; fi
    rm -rf "$WORK"
}
trap cleanup EXIT INT TERM

git -C "$ROOT" rev-parse --verify -q "$REF^{commit}" >/dev/null || { echo "compare_h2_client_cpu: $REF is not a commit" >&2; exit 1; }
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
sed -i 's/ backlog=4096;/ http2 backlog=4096;/' "$WORK/nginx.conf" # h2c, prior knowledge
start_nginx_anchor "$WORK" "$PORT"

# run BUILD MODE: prints "cpu_ns_per_request req_per_s requests"
run() {
    local bin=$WORK/lt_$1 extra=()
    [ "$2" = rendered ] && extra=(--path '/ok?s={{seq}}' --header 'X-Id: {{uuid}}')
    /usr/bin/time -f 'CPU %U %S' -o "$WORK/time" "${CLIENT_ON[@]}" "$bin" --port "$PORT" --path /ok --http2 \
        --concurrency 10 --streams 10 --network-threads 1 --duration "$SECS" "${extra[@]}" \
        --json "$WORK/r.json" --quiet >"$WORK/out" 2>&1 || true
    python3 - "$WORK/r.json" "$(awk '/^CPU/{print $2+$3}' "$WORK/time")" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
n = r["requests"]
print(f"{float(sys.argv[2]) * 1e9 / n if n else 0:.0f} {r['requests_per_sec']:.0f} {n}")
PY
}

echo "nginx 1 worker, h2c on 127.0.0.1:$PORT; $ROUNDS rounds of ${SECS}s per run; $(nproc) CPUs, $PINNED; load $(cut -d' ' -f1-3 /proc/loadavg)"
UPDOWN="" RENDER=""
for round in $(seq "$ROUNDS"); do
    echo "round $round"
    order=(before/static after/static after/rendered)
    [ $((round % 2)) = 0 ] && order=(after/rendered after/static before/static)
    declare -A CPU=()
    for run_ in "${order[@]}"; do
        read -r cpu rps n < <(run "${run_%/*}" "${run_#*/}")
        CPU[$run_]=$cpu
        printf '  %-16s %8s ns CPU/request  %9s req/s  %s responses\n' "$run_" "$cpu" "$rps" "$n"
    done
    UPDOWN+="$(python3 -c "print(${CPU[after/static]} / ${CPU[before/static]} if ${CPU[before/static]} else 0)") "
    RENDER+="$(python3 -c "print(${CPU[after/rendered]} / ${CPU[after/static]} if ${CPU[after/static]} else 0)") "
done

echo
python3 - "$UPDOWN" "$RENDER" <<'PY'
import statistics, sys
for label, arg in (("after/before, static h2c   ", sys.argv[1]), ("rendered/static, after     ", sys.argv[2])):
    ratios = [float(x) for x in arg.split()]
    print(f"{label}: rounds {' '.join(f'{r:.3f}' for r in ratios)} -> median {statistics.median(ratios):.3f}")
PY
