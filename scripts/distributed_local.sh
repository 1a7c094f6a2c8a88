#!/usr/bin/env bash
# A distributed load_tester run on one machine (docs/distributed.md): starts
# weaseldb, runs N load_tester instances with the same --start-at against
# it, merges their results with `load_tester merge`, and renders the merged
# result with `report` (a run directory holding it as load.json/load.hlog).
#
# Usage: scripts/distributed_local.sh [N] [SECONDS] [OUT_DIR]
#   N (3) instances, each --concurrency 10 --warmup 1 for SECONDS (5);
#   OUT_DIR (a new temporary folder) keeps every file.
# Needs build/weaseldb, build/load_tester and build/report (make build).
set -euo pipefail
N=${1:-3}
SECS=${2:-5}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${3:-$(mktemp -d)}
BIN=${BUILD_DIR:-$ROOT/build}
# shellcheck source=lib/tools.sh
. "$ROOT/scripts/lib/tools.sh"
# shellcheck source=lib/proc.sh
. "$ROOT/scripts/lib/proc.sh"
need_tool python3
for b in weaseldb load_tester report; do
    [ -x "$BIN/$b" ] || { echo "distributed_local: $BIN/$b not built (make build)" >&2; exit 1; }
done
mkdir -p "$OUT"
cd "$OUT"
PORT=$(free_port)
printf '[server]\ninterfaces = [{ type = "tcp", address = "127.0.0.1", port = %d }]\nio_threads = 1\n' "$PORT" >weaseldb.toml
"$BIN/weaseldb" --config weaseldb.toml >weaseldb.log 2>&1 &
SERVER=$!
trap 'kill $SERVER 2>/dev/null || true; wait $SERVER 2>/dev/null || true' EXIT
for _ in $(seq 100); do grep -q 'weaseldb: ready' weaseldb.log && break; sleep 0.1; done

START=$(date -u -d '+3 seconds' +%Y-%m-%dT%H:%M:%SZ)
echo "$ START=$START   # the common start"
pids=()
for i in $(seq 0 $((N - 1))); do
    cmd=("$BIN/load_tester" --url "http://127.0.0.1:$PORT/ok" --concurrency 10 --warmup 1 --duration "$SECS"
        --stats-interval 1 --start-at "$START" --instance "local-$i" --json "local-$i.json"
        --hdr-log "local-$i.hlog" --vegeta "local-$i.bin" --quiet)
    echo "$ build/load_tester ${cmd[*]:1} > local-$i.out &"
    "${cmd[@]}" >"local-$i.out" 2>&1 &
    pids+=($!)
done
for p in "${pids[@]}"; do wait "$p"; done
echo "$ cat local-0.out"
cat local-0.out
echo "$ build/load_tester merge --json merged.json --hdr-log merged.hlog --vegeta merged.bin local-*.json"
"$BIN/load_tester" merge --json merged.json --hdr-log merged.hlog --vegeta merged.bin local-*.json

# The report of the merged result: a run directory with a manifest.
mkdir -p run
cp merged.json run/load.json
cp merged.hlog run/load.hlog
for i in $(seq 0 $((N - 1))); do
    printf 'load-%d\t0\t%s\tload_tester --start-at %s --instance local-%d\n' "$i" "$SECS" "$START" "$i"
done >run/steps.tsv
echo "$ build/report manifest --run run --config weaseldb.toml --steps run/steps.tsv --duration $SECS"
"$BIN/report" manifest --run run --config weaseldb.toml --steps run/steps.tsv --duration "$SECS"
echo "$ build/report --run run --out run/report.md --images run/img"
"$BIN/report" --run run --out run/report.md --images run/img
echo "$ grep -m3 'req/s' run/report.md"
grep -m3 'req/s' run/report.md || true
echo "files in $OUT"
