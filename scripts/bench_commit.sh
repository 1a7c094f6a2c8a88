#!/usr/bin/env bash
# POST /v1/commit throughput next to GET /ok, against one weaseldb, in the
# same run: the two loads alternate (ok commit ok commit ...), short runs,
# medians over the rounds, and the ratio commit/ok. Each commit carries a
# fresh request_id ({{uuid}}) and one small write (key "key", value
# "value"), and no preconditions.
#
# Usage: scripts/bench_commit.sh            (env below)
#   ROUNDS=3 DURATION=4 WARMUP=1 CONNS=50 NETWORK=tcp|unix
#   SUBSCRIBERS=0   GET /v1/subscribe streams (curl, output discarded) kept
#                   open during the runs, to see what streaming costs
#   WEASELDB_CONFIG=testdata/default.toml  (interfaces are replaced by a free
#   loopback port and a socket in a temporary folder)
# Needs: go, python3. Builds build/weaseldb and build/load_tester.
# Prints one line per run, then the medians and the ratio; exits 1 if any
# run had errors (a commit answered other than 200 is an error).
set -euo pipefail

ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-4}
WARMUP=${WARMUP:-1}
CONNS=${CONNS:-50}
NETWORK=${NETWORK:-tcp}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CONFIG=${WEASELDB_CONFIG:-$ROOT/testdata/default.toml}

cd "$ROOT"
go build -o build/weaseldb ./cmd/weaseldb
go build -o build/load_tester ./cmd/load_tester

WORK=$(mktemp -d)
SUBSCRIBERS=${SUBSCRIBERS:-0}
SERVER_PID=""
SUB_PIDS=()
cleanup() {
    for pid in "${SUB_PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
    if [ -n "$SERVER_PID" ]; then kill "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; fi
    rm -rf "$WORK"
}
trap cleanup EXIT INT TERM

PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
SOCK=$WORK/weaseldb.sock
# The config's [server] interfaces, replaced; every other setting kept.
python3 - "$CONFIG" "$PORT" "$SOCK" >"$WORK/config.toml" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
text = re.sub(r'(?ms)^interfaces\s*=\s*\[.*?^\]\n', '', text)
text = re.sub(r'(?m)^interfaces\s*=.*\n', '', text)
iface = 'interfaces = [ { type = "tcp", address = "127.0.0.1", port = %s }, { type = "unix", path = "%s" } ]\n' % (sys.argv[2], sys.argv[3])
text = re.sub(r'(?m)^\[server\]\n', '[server]\n' + iface, text, count=1)
sys.stdout.write(text)
PY

build/weaseldb --config "$WORK/config.toml" >"$WORK/server.log" 2>&1 &
SERVER_PID=$!
for _ in $(seq 100); do
    grep -q 'weaseldb: ready' "$WORK/server.log" && break
    kill -0 "$SERVER_PID" 2>/dev/null || { cat "$WORK/server.log" >&2; exit 1; }
    sleep 0.1
done
grep -q 'weaseldb: ready' "$WORK/server.log" || { echo "bench_commit: server not ready" >&2; exit 1; }

for _ in $(seq "$SUBSCRIBERS"); do
    curl -sN "http://127.0.0.1:$PORT/v1/subscribe" >/dev/null &
    SUB_PIDS+=($!)
done

if [ "$NETWORK" = unix ]; then TARGET=(--unix-socket "$SOCK"); else TARGET=(--host 127.0.0.1 --port "$PORT"); fi
COMMON=(--concurrency "$CONNS" --duration "$DURATION" --warmup "$WARMUP" --quiet)
BODY='{"request_id":"{{uuid}}","read_version":0,"operations":[{"type":"write","key":"a2V5","value":"dmFsdWU="}]}'

echo "bench_commit: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg); $ROUNDS rounds of ${DURATION}s (+${WARMUP}s warm-up), $CONNS connections, $NETWORK, $SUBSCRIBERS subscribers"
failed=0
for r in $(seq "$ROUNDS"); do
    for kind in ok commit; do
        out=$WORK/$kind-$r.json
        if [ $kind = ok ]; then
            build/load_tester "${TARGET[@]}" --path /ok "${COMMON[@]}" --json "$out" >/dev/null || failed=1
        else
            build/load_tester "${TARGET[@]}" --path /v1/commit --method POST \
                --header 'Content-Type: application/json' --body "$BODY" "${COMMON[@]}" --json "$out" >/dev/null || failed=1
        fi
        python3 - "$out" "$kind" "$r" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
flag = "  CLIENT-BOUND" if d.get("client_bound") else ""
print("round %s %-6s %9.0f req/s  p50 %6.2f ms  p99 %6.2f ms  errors %d  codes %s%s" % (
    sys.argv[3], sys.argv[2], d["requests_per_sec"], d["latency_ns"]["p50"] / 1e6,
    d["latency_ns"]["p99"] / 1e6, d["errors"], json.dumps(d.get("status_codes", {})), flag))
PY
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
VERSION=$(python3 - "$PORT" <<'PY'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(b"GET /v1/version HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
data = b""
while True:
    chunk = s.recv(4096)
    if not chunk:
        break
    data += chunk
print(data.split(b"\r\n\r\n", 1)[1].decode())
PY
)
echo "server version after the run: $VERSION"
if [ "$SUBSCRIBERS" -gt 0 ]; then
    alive=0
    for pid in "${SUB_PIDS[@]}"; do kill -0 "$pid" 2>/dev/null && alive=$((alive + 1)); done
    echo "subscribers still streaming at the end: $alive of $SUBSCRIBERS (the others were cut as slow consumers)"
fi
exit $failed
