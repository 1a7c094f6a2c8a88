# shellcheck shell=bash
# Sourced by the comparison scripts that start a weaseldb of their own.
#
# weaseldb_config SRC IFACES [KEY=VALUE...]: prints SRC (a weaseldb TOML)
# with its [server] interfaces replaced by IFACES (a TOML inline-table
# list's body, e.g. '{ type = "tcp", address = "127.0.0.1", port = 8080 }')
# and each KEY set to VALUE (VALUE as TOML: '"WaitIfStageEmpty"', 1). A KEY
# the config does not have is an error: a renamed key must not be ignored.
weaseldb_config() {
  local src=$1 ifaces=$2
  shift 2
  python3 - "$src" "$ifaces" "$@" <<'PY'
import re, sys
src, ifaces, sets = sys.argv[1], sys.argv[2], sys.argv[3:]
text = open(src).read()
text = re.sub(r'(?ms)^interfaces\s*=\s*\[.*?^\]\n', '', text)
text = re.sub(r'(?m)^interfaces\s*=.*\n', '', text)
if not re.search(r'(?m)^\[server\]\n', text):
    sys.exit('%s: no [server] table' % src)
text = re.sub(r'(?m)^\[server\]\n', lambda _: '[server]\ninterfaces = [ %s ]\n' % ifaces, text, count=1)
for kv in sets:
    key, value = kv.split('=', 1)
    text, n = re.subn(r'(?m)^%s\s*=.*$' % re.escape(key), lambda _: '%s = %s' % (key, value), text)
    if n == 0:
        sys.exit('%s: no %s in the config' % (src, key))
sys.stdout.write(text)
PY
}

# start_weaseldb BIN CONFIG LOG: starts BIN --config CONFIG under
# SERVER_ON (lib/cpus.sh's pin_server_and_client; empty: unpinned), its
# output in LOG, and waits until it logs that it is ready; sets SERVER_PID.
# Returns 1, with the log on stderr, when it exits first or is not ready
# within 10 s.
start_weaseldb() {
  local bin=$1 config=$2 log=$3
  "${SERVER_ON[@]}" "$bin" --config "$config" >"$log" 2>&1 &
  SERVER_PID=$!
  for _ in $(seq 100); do
    grep -q 'weaseldb: ready' "$log" && return 0
    kill -0 "$SERVER_PID" 2>/dev/null || break
    sleep 0.1
  done
  echo "weaseldb ($bin --config $config) did not start; its log:" >&2
  cat "$log" >&2
  return 1
}
