#!/usr/bin/env bash
# POST /v1/commit throughput, measured two ways:
#
#   BEFORE=<git ref>  A/B: the ref (built from `git archive` into a temporary
#                     folder) against the working tree (or AFTER=<git ref>,
#                     built the same way), interleaved: each
#                     round runs both, and which goes first alternates
#                     (A B, B A, ...), so drift on a busy machine hits both
#                     alike. Every run gets a fresh server (empty request-id
#                     memory). Prints each run, the medians, the ratio
#                     after/before and each round's ratio, and the memory
#                     the after server grew by per million commits (VmRSS
#                     from /proc, after the run minus at start: a fresh
#                     server filling its capped histories, which levels off
#                     near 1 GiB; docs/api.md "Memory bounds"). Exits 2 when
#                     the median ratio is below MIN_RATIO (default 0.95).
#   no BEFORE         one build of the working tree: GET /ok and POST
#                     /v1/commit alternated against one server, medians and
#                     the ratio commit/ok.
#
# Each commit carries a fresh request_id ({{uuid}}) and one small write (key
# "key", value "value"), and no preconditions.
#
# Usage: BEFORE=<ref> scripts/bench_commit.sh      (env below)
#   ROUNDS=3 DURATION=4 WARMUP=1 CONNS=50 NETWORK=tcp|unix
#   KINDS="commit"  in A/B mode, the loads compared: commit, ok, or both
#   MIN_RATIO=0.95  A/B verdict threshold
#   PIN=1           (default on 2+ CPUs) server on the first allowed CPU, the
#                   load tester on the second; PIN=0 leaves them unpinned
#   SUBSCRIBERS=0   GET /v1/subscribe streams (curl, output discarded) kept
#                   open during the runs (one-build mode), to see what
#                   streaming costs
#   WEASELDB_CONFIG=testdata/default.toml  (interfaces are replaced by a free
#                   loopback port and a socket in a temporary folder; a build
#                   that knows commit.max_request_ids gets 16777216, so no
#                   run reaches the cap)
# Needs: go, python3, curl. Builds into a temporary folder (never build/).
# A commit answered other than 200 is an error; any error exits 1.
set -euo pipefail

ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-4}
WARMUP=${WARMUP:-1}
CONNS=${CONNS:-50}
NETWORK=${NETWORK:-tcp}
KINDS=${KINDS:-commit}
MIN_RATIO=${MIN_RATIO:-0.95}
SUBSCRIBERS=${SUBSCRIBERS:-0}
BEFORE=${BEFORE:-}
AFTER=${AFTER:-}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CONFIG=${WEASELDB_CONFIG:-$ROOT/testdata/default.toml}
MAX_IDS=16777216

WORK=$(mktemp -d)
SERVER_PID=""
SUB_PIDS=()
stop_server() {
    if [ -n "$SERVER_PID" ]; then
        kill "$SERVER_PID" 2>/dev/null || true
        wait "$SERVER_PID" 2>/dev/null || true
        SERVER_PID=""
    fi
}
cleanup() {
    for pid in "${SUB_PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
    stop_server
    rm -rf "$WORK"
}
trap cleanup EXIT INT TERM

# shellcheck source=lib/tools.sh
. "$ROOT/scripts/lib/tools.sh"
# shellcheck source=lib/build_ref.sh
. "$ROOT/scripts/lib/build_ref.sh"
# shellcheck source=lib/proc.sh
. "$ROOT/scripts/lib/proc.sh"
need_tools go git python3 curl

cd "$ROOT"
mkdir -p "$WORK/after" "$WORK/before"
# build_ref REF BUILD: weaseldb of commit REF into $WORK/BUILD; prints the
# full hash.
build_ref() {
    local rev
    rev=$(git rev-parse --verify "$1^{commit}") || { echo "bench_commit: $1 is not a commit" >&2; exit 1; }
    build_at_ref "$rev" "$WORK/src-$2" -o "$WORK/$2/weaseldb" ./cmd/weaseldb
    echo "$rev"
}
# knows_cap SRC: 1 when that source's config has commit.max_request_ids.
knows_cap() { grep -q '"max_request_ids"' "$1/server/config/parse.go" && echo 1 || echo 0; }
go build -o "$WORK/load_tester" ./cmd/load_tester
if [ -n "$AFTER" ]; then
    after_rev=$(build_ref "$AFTER" after)
    AFTER_KNOWS_CAP=$(knows_cap "$WORK/src-after")
    AFTER_NAME="$AFTER ($after_rev)"
else
    go build -o "$WORK/after/weaseldb" ./cmd/weaseldb
    AFTER_KNOWS_CAP=$(knows_cap "$ROOT")
    AFTER_NAME="the working tree"
fi
if [ -n "$BEFORE" ]; then
    rev=$(build_ref "$BEFORE" before)
    BEFORE_KNOWS_CAP=$(knows_cap "$WORK/src-before")
fi

# shellcheck source=lib/cpus.sh
. "$ROOT/scripts/lib/cpus.sh"
read -r FIRST SECOND < <(first_two_cpus) || true
PIN=${PIN:-1}
SERVER_ON=(); CLIENT_ON=()
if [ "$PIN" = 1 ] && [ -n "$SECOND" ]; then
    SERVER_ON=(taskset -c "$FIRST"); CLIENT_ON=(taskset -c "$SECOND")
fi

PORT=$(free_port)
SOCK=$WORK/weaseldb.sock
# write_config OUT WITH_CAP: the config's [server] interfaces replaced; every
# other setting kept; commit.max_request_ids raised when WITH_CAP=1.
write_config() {
    python3 - "$CONFIG" "$PORT" "$SOCK" "$2" "$MAX_IDS" >"$1" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
text = re.sub(r'(?ms)^interfaces\s*=\s*\[.*?^\]\n', '', text)
text = re.sub(r'(?m)^interfaces\s*=.*\n', '', text)
iface = 'interfaces = [ { type = "tcp", address = "127.0.0.1", port = %s }, { type = "unix", path = "%s" } ]\n' % (sys.argv[2], sys.argv[3])
text = re.sub(r'(?m)^\[server\]\n', '[server]\n' + iface, text, count=1)
if sys.argv[4] == "1":
    text = re.sub(r'(?m)^max_request_ids\s*=.*\n', '', text)
    if re.search(r'(?m)^\[commit\]\n', text):
        text = re.sub(r'(?m)^\[commit\]\n', '[commit]\nmax_request_ids = %s\n' % sys.argv[5], text, count=1)
    else:
        text += '\n[commit]\nmax_request_ids = %s\n' % sys.argv[5]
sys.stdout.write(text)
PY
}
write_config "$WORK/after.toml" "$AFTER_KNOWS_CAP"
[ -n "$BEFORE" ] && write_config "$WORK/before.toml" "$BEFORE_KNOWS_CAP"

# start_server BUILD: a fresh server of BUILD (after|before), ready.
start_server() {
    rm -f "$SOCK"
    "${SERVER_ON[@]}" "$WORK/$1/weaseldb" --config "$WORK/$1.toml" >"$WORK/server.log" 2>&1 &
    SERVER_PID=$!
    for _ in $(seq 100); do
        grep -q 'weaseldb: ready' "$WORK/server.log" && return 0
        kill -0 "$SERVER_PID" 2>/dev/null || { cat "$WORK/server.log" >&2; exit 1; }
        sleep 0.1
    done
    echo "bench_commit: server not ready" >&2
    exit 1
}

rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$SERVER_PID/status"; }

if [ "$NETWORK" = unix ]; then TARGET=(--unix-socket "$SOCK"); else TARGET=(--host 127.0.0.1 --port "$PORT"); fi
COMMON=(--concurrency "$CONNS" --duration "$DURATION" --warmup "$WARMUP" --quiet)
BODY='{"request_id":"{{uuid}}","read_version":0,"operations":[{"type":"write","key":"a2V5","value":"dmFsdWU="}]}'

failed=0
# load KIND OUT: one load_tester run against the running server.
load() {
    if [ "$1" = ok ]; then
        "${CLIENT_ON[@]}" "$WORK/load_tester" "${TARGET[@]}" --path /ok "${COMMON[@]}" --json "$2" >/dev/null || failed=1
    else
        "${CLIENT_ON[@]}" "$WORK/load_tester" "${TARGET[@]}" --path /v1/commit --method POST \
            --header 'Content-Type: application/json' --body "$BODY" "${COMMON[@]}" --json "$2" >/dev/null || failed=1
    fi
}

# show LABEL ROUND JSON [EXTRA]: one line per run.
show() {
    python3 - "$3" "$1" "$2" "${4:-}" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
flag = "  CLIENT-BOUND" if d.get("client_bound") else ""
print("round %s %-14s %9.0f req/s  p50 %6.2f ms  p99 %6.2f ms  errors %d  codes %s%s%s" % (
    sys.argv[3], sys.argv[2], d["requests_per_sec"], d["latency_ns"]["p50"] / 1e6,
    d["latency_ns"]["p99"] / 1e6, d["errors"], json.dumps(d.get("status_codes", {})),
    ("  " + sys.argv[4]) if sys.argv[4] else "", flag))
PY
}

pinned="unpinned"
[ ${#SERVER_ON[@]} -gt 0 ] && pinned="server on CPU $FIRST, load tester on CPU $SECOND"

if [ -n "$BEFORE" ]; then
    echo "bench_commit: before $BEFORE ($rev), after $AFTER_NAME; $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg); $ROUNDS rounds of ${DURATION}s (+${WARMUP}s warm-up), $CONNS connections, $NETWORK, $pinned"
    for r in $(seq "$ROUNDS"); do
        order="before after"
        [ $((r % 2)) -eq 0 ] && order="after before"
        for kind in $KINDS; do
            for build in $order; do
                start_server "$build"
                rss0=$(rss_kb)
                out=$WORK/$kind-$build-$r.json
                load "$kind" "$out"
                rss1=$(rss_kb)
                commits=$(curl -s "http://127.0.0.1:$PORT/v1/version" | python3 -c 'import json,sys; print(json.load(sys.stdin)["version"])')
                stop_server
                extra=""
                if [ "$kind" = commit ] && [ "$commits" -gt 0 ]; then
                    extra=$(python3 -c 'import sys; g=(int(sys.argv[2])-int(sys.argv[1]))*1024; n=int(sys.argv[3]); print("%d commits, server RSS +%.0f MiB (%.0f MiB per million)" % (n, g/2**20, g/n*1e6/2**20))' "$rss0" "$rss1" "$commits")
                fi
                show "$kind/$build" "$r" "$out" "$extra"
            done
        done
    done
    verdict=0
    python3 - "$WORK" "$ROUNDS" "$MIN_RATIO" "$KINDS" <<'PY' || verdict=$?
import json, statistics, sys
work, rounds, min_ratio, kinds = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4].split()
verdict = 0
for kind in kinds:
    rps = {b: [json.load(open("%s/%s-%s-%d.json" % (work, kind, b, r)))["requests_per_sec"] for r in range(1, rounds + 1)]
           for b in ("before", "after")}
    med = {b: statistics.median(v) for b, v in rps.items()}
    ratio = med["after"] / med["before"]
    per_round = " ".join("%.2f" % (a / b) for a, b in zip(rps["after"], rps["before"]))
    print("%-6s median before %9.0f req/s, after %9.0f req/s, ratio after/before %.3f (rounds: %s)" % (
        kind, med["before"], med["after"], ratio, per_round))
    if ratio < min_ratio:
        print("%-6s BELOW %.2f" % (kind, min_ratio))
        verdict = 2
sys.exit(verdict)
PY
    [ $failed -ne 0 ] && exit 1
    exit $verdict
fi

start_server after
for _ in $(seq "$SUBSCRIBERS"); do
    curl -sN "http://127.0.0.1:$PORT/v1/subscribe" >/dev/null &
    SUB_PIDS+=($!)
done
echo "bench_commit: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg); $ROUNDS rounds of ${DURATION}s (+${WARMUP}s warm-up), $CONNS connections, $NETWORK, $SUBSCRIBERS subscribers, $pinned"
for r in $(seq "$ROUNDS"); do
    for kind in ok commit; do
        out=$WORK/$kind-$r.json
        load "$kind" "$out"
        show "$kind" "$r" "$out"
    done
done
python3 - "$WORK" "$ROUNDS" <<'PY'
import json, statistics, sys
work, rounds = sys.argv[1], int(sys.argv[2])
med = {}
for kind in ("ok", "commit"):
    med[kind] = statistics.median(json.load(open("%s/%s-%d.json" % (work, kind, r)))["requests_per_sec"] for r in range(1, rounds + 1))
print("median GET /ok          %9.0f req/s" % med["ok"])
print("median POST /v1/commit  %9.0f req/s" % med["commit"])
print("ratio commit/ok         %9.2f" % (med["commit"] / med["ok"]))
PY
echo "server version after the run: $(curl -s "http://127.0.0.1:$PORT/v1/version")"
if [ "$SUBSCRIBERS" -gt 0 ]; then
    alive=0
    for pid in "${SUB_PIDS[@]}"; do kill -0 "$pid" 2>/dev/null && alive=$((alive + 1)); done
    echo "subscribers still streaming at the end: $alive of $SUBSCRIBERS (the others were cut as slow consumers)"
fi
exit $failed
