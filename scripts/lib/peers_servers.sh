# shellcheck shell=bash
# Sourced by compare_peers.sh: the server peers, started and measured.
# Needs BIN (the built binaries), WORK, SERVER_ON and CLIENT_ON
# (lib/cpus.sh), PEERS (build/peers), PIDS (what cleanup stops).

SERVER_NAMES=(weaseldb weaseldb_fitted nginx gnet fasthttp nethttp)

# weaseldb_config NAME PORT FILE: weaseldb with nothing but its listener
# (what a user starts), or the harness's fitted setup (docs/anchors.md).
weaseldb_config() {
  local name=$1 port=$2 file=$3
  printf '[server]\ninterfaces = [{ type = "tcp", address = "127.0.0.1", port = %s }]\n' "$port" >"$file"
  [ "$name" = weaseldb_fitted ] || return 0
  cat >>"$file" <<'TOML'
io_threads = 1
[commit]
pipeline_wait_strategy = "WaitIfStageEmpty"
pipeline_release_threads = 1
[benchmark]
ok_resolve_iterations = 0
TOML
}

# start_server NAME PORT DIR [WRAPPER...]: starts NAME on 127.0.0.1:PORT
# (under SERVER_ON and WRAPPER), waits for the port, and sets SERVED_BY to
# the process that serves: nginx's worker, or its only process under a
# wrapper (master_process off). Returns 1 if it never listens.
start_server() {
  local name=$1 port=$2 dir=$3; shift 3
  local cmd
  mkdir -p "$dir"
  case $name in
    weaseldb*) weaseldb_config "$name" "$port" "$dir/weaseldb.toml"; cmd=("$BIN/weaseldb" --config "$dir/weaseldb.toml") ;;
    nginx) write_nginx_conf "$dir" "$port"
           [ $# = 0 ] || sed -i '1i master_process off;' "$dir/nginx.conf"
           cmd=(nginx -c "$dir/nginx.conf") ;;
    gnet) cmd=("$BIN/gnet_ok" --addr "127.0.0.1:$port") ;;
    fasthttp) cmd=("$BIN/fasthttp_ok" --addr "127.0.0.1:$port") ;;
    nethttp) cmd=("$BIN/nethttp_ok" --addr "127.0.0.1:$port") ;;
  esac
  "${SERVER_ON[@]}" "$@" "${cmd[@]}" >"$dir/out.log" 2>&1 &
  SERVED_BY=$!; PIDS+=("$SERVED_BY")
  if ! wait_port "$port" "$SERVED_BY" "${START_TRIES:-100}"; then
    echo "compare_peers: $name did not listen on $port:" >&2; tail -5 "$dir/out.log" >&2
    return 1
  fi
  if [ "$name" = nginx ] && [ $# = 0 ]; then SERVED_BY=$(pgrep -P "$SERVED_BY" | head -1); fi
}

# wrk_load URL DEPTH [PREFIX...]: wrk -t1 -c$CONNS for DURATION_S (or
# $WRK_S) seconds, 16 per write at DEPTH 16; prints "requests req_per_s".
wrk_load() {
  local url=$1 depth=$2; shift 2
  local lua=()
  [ "$depth" = 1 ] || lua=(-s "$WORK/pipeline$depth.lua")
  "${CLIENT_ON[@]}" "$@" wrk -t1 -c"$CONNS" -d"${WRK_S:-$DURATION}s" "${lua[@]}" "$url" 2>&1 |
    awk '/requests in/ {n=$1} /^Requests\/sec/ {r=$2} END {print n + 0, r + 0}'
}

# server_round ROUND: every server under wrk, unpipelined then 16 deep, the
# order rotated by round so no server always follows the same one.
server_round() {
  local round=$1 depth i name scen n rps cpu0 sw0 sys0 cpu1 sw1 sys1
  for depth in 1 16; do
    scen=ok; [ "$depth" = 1 ] || scen=ok_pipelined$depth
    for i in "${!SERVER_NAMES[@]}"; do
      name=${SERVER_NAMES[$(((i + round) % ${#SERVER_NAMES[@]}))]}
      read -r cpu0 sw0 sys0 < <("$PEERS" sample "${SERVER_PID[$name]}")
      read -r n rps < <(wrk_load "http://127.0.0.1:${SERVER_PORT[$name]}/ok" "$depth")
      read -r cpu1 sw1 sys1 < <("$PEERS" sample "${SERVER_PID[$name]}")
      printf '   round %d %-15s %-16s %10.0f req/s\n' "$round" "$scen" "$name" "$rps"
      sample_load server "$scen" "$name" "$round" "$n" "$rps" $((cpu1 - cpu0)) $((sys1 - sys0)) $((sw1 - sw0))
    done
  done
}
