#!/usr/bin/env bash
# What idle keep-alive connections cost weaseldb with its default timeouts
# on: N connections (default 10000) each send one GET /ok and then sit idle;
# the server's CPU (user+system, from /proc/PID/stat: the kernel's
# accounting) over WINDOW seconds (default 10), and its RSS before and after
# the connections opened, per connection. The window must end before the
# idle timeout (60 s by default) closes them.
#
# Usage: scripts/idle_connections.sh     (env: CONNS=10000 WINDOW=10
#        WAIT_STRATEGY=WaitIfStageEmpty IO_THREADS=1 SERVER_EXTRA='')
set -euo pipefail

CONNS=${CONNS:-10000}
WINDOW=${WINDOW:-10}
WAIT_STRATEGY=${WAIT_STRATEGY:-WaitIfStageEmpty}
IO_THREADS=${IO_THREADS:-1}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=lib/tools.sh
. "$ROOT/scripts/lib/tools.sh"
# shellcheck source=lib/proc.sh
. "$ROOT/scripts/lib/proc.sh"
need_tool python3
need=$((CONNS + 200))
if [ "$(ulimit -n)" -lt "$need" ]; then
    ulimit -n "$need" 2>/dev/null || { echo "idle_connections: needs ulimit -n >= $need (have $(ulimit -n))" >&2; exit 1; }
fi

WORK=$(mktemp -d /tmp/idle_connections.XXXXXX)
PID=""
cleanup() {
    [ -n "$PID" ] && kill "$PID" 2>/dev/null || true
    wait 2>/dev/null || true
    rm -rf "$WORK"
}
trap cleanup EXIT INT TERM

(cd "$ROOT" && go build -trimpath -o "$WORK/weaseldb" ./cmd/weaseldb)
PORT=$(free_port)
cat >"$WORK/w.toml" <<TOML
[server]
interfaces = [{ type = "tcp", address = "127.0.0.1", port = $PORT }]
io_threads = $IO_THREADS
${SERVER_EXTRA:-}
[commit]
pipeline_wait_strategy = "$WAIT_STRATEGY"
TOML
"$WORK/weaseldb" --config "$WORK/w.toml" >"$WORK/w.log" 2>&1 &
PID=$!
for _ in $(seq 100); do grep -q "weaseldb: ready" "$WORK/w.log" 2>/dev/null && break; sleep 0.1; done
grep -q "weaseldb: ready" "$WORK/w.log" || { echo "idle_connections: server did not start" >&2; cat "$WORK/w.log" >&2; exit 1; }
grep -E "timeout_seconds|max_connections" "$WORK/w.log" | sed 's/^/   /'

python3 - "$PORT" "$CONNS" "$WINDOW" "$PID" <<'PY'
import os, socket, sys, time
port, n, window, pid = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
hz = os.sysconf("SC_CLK_TCK")
def cpu():
    f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / hz
def rss():
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
rss0 = rss()
conns = []
t_open = time.time()
for i in range(n):
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(b"GET /ok HTTP/1.1\r\nHost: x\r\n\r\n")
    conns.append(s)
for s in conns:
    buf = b""
    while b"\r\n\r\n" not in buf or not buf.endswith(b'{"status":"ok"}'):
        chunk = s.recv(4096)
        if not chunk:
            sys.exit(f"idle_connections: a connection closed early after {len(buf)} bytes")
        buf += chunk
opened = time.time() - t_open
time.sleep(1)
rss1 = rss()
c0, t0 = cpu(), time.time()
time.sleep(window)
c1, t1 = cpu(), time.time()
alive = 0
for s in conns:
    s.setblocking(False)
    try:
        alive += 1 if s.recv(1) else 0
    except BlockingIOError:
        alive += 1
print(f"{n} connections opened and answered in {opened:.1f} s; {alive} still open after the window")
print(f"idle CPU: {100 * (c1 - c0) / (t1 - t0):.3f}% of one core over {t1 - t0:.1f} s ({c1 - c0:.2f} s CPU)  (bar: <= 0.5%)")
print(f"RSS: {rss0 / 2**20:.1f} MiB before, {rss1 / 2**20:.1f} MiB with the connections: {(rss1 - rss0) / n:.0f} bytes per connection")
PY
