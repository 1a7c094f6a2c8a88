# shellcheck shell=bash
# Sourced by compare_peers.sh: the client peers against CLIENT_TARGET's
# plain URL (nginx or weaseldb) and nginx's TLS one. Each
# client_SCENARIO_PEER function runs one client once and prints "requests
# req_per_s cpu_ns sys_ns" (the client's user+system CPU from /usr/bin/time,
# and its system part); run_client picks it, load_tester on either engine.
# CLIENT_WRAP (an array, empty by default) goes between the pinning and
# the client: valgrind or strace for the counts. Needs PLAIN_URL, TLS_URL,
# TLS_DIR, BIN, WORK, CONNS, DURATION, RATE, CLIENT_ON, and lib/tools.sh.

CLIENT_PAIRS=("closed wrk" "closed_pipelined16 wrk" "open_loop wrk2" "https11 wrk" "h2 h2load")
# load_tester's rows, one an engine: load_tester is --io-backend epoll (named,
# not the default, so the row keeps its meaning when the default changes),
# load_tester_io_uring is --io-backend io_uring.
LT_ENGINES=(load_tester load_tester_io_uring)
CLIENT_WRAP=()
LT_IO_BACKEND=epoll
# URING_FALLBACK: why load_tester's io_uring engine ran on epoll here (its
# rows are then skipped, saying so); "" while it has not.
URING_FALLBACK=""

# run_client SCENARIO WHO: one run of WHO (load_tester_io_uring: load_tester
# on io_uring).
run_client() {
  case $2 in
    load_tester_io_uring) LT_IO_BACKEND=io_uring "client_$1_load_tester" ;;
    *) "client_$1_$2" ;;
  esac
}

# timed OUT CMD...: runs CMD pinned and wrapped, output in OUT; prints
# "CPU_NS SYS_NS" (user+system, and system alone).
timed() {
  local out=$1; shift
  /usr/bin/time -f '%U %S' -o "$WORK/time" "${CLIENT_ON[@]}" "${CLIENT_WRAP[@]}" "$@" >"$out" 2>&1 || true
  awk 'END {printf "%.0f %.0f\n", ($1 + $2) * 1e9, $2 * 1e9}' "$WORK/time"
}

# run_lt [FLAGS...]: load_tester on LT_IO_BACKEND; a run whose engine fell
# back to epoll writes why to $WORK/lt.fallback and counts nothing.
run_lt() {
  local cpu_sys
  cpu_sys=$(timed "$WORK/lt.out" "$BIN/load_tester" --io-backend "$LT_IO_BACKEND" --concurrency "$CONNS" --network-threads 1 \
    --duration "$DURATION" --json "$WORK/lt.json" --quiet "$@")
  python3 - "$WORK/lt.json" "$cpu_sys" "$LT_IO_BACKEND" "$WORK/lt.fallback" <<'PY'
import json, sys
try:
    r = json.load(open(sys.argv[1]))
    ran = r.get("io_backend", sys.argv[3])
    if ran != sys.argv[3]:
        open(sys.argv[4], "w").write("io_uring fell back to %s: %s" % (ran, r.get("io_backend_fallback", "no reason given")))
        print(0, 0, sys.argv[2])
    else:
        print(r["requests"], r["requests_per_sec"], sys.argv[2])
except (OSError, ValueError, KeyError):
    print(0, 0, sys.argv[2])
PY
  rm -f "$WORK/lt.json"
}

# run_wrk URL [WRK FLAGS...]: wrk, or wrk2 with WRK=wrk2; a request
# unanswered after WRK_TIMEOUT (wrk's own 2 s) counts as a timeout.
run_wrk() {
  local url=$1 cpu_sys; shift
  cpu_sys=$(timed "$WORK/wrk.out" "${WRK:-wrk}" -t1 -c"$CONNS" -d"${DURATION}s" --timeout "${WRK_TIMEOUT:-2s}" "$@" "$url")
  awk -v c="$cpu_sys" '/requests in/ {n=$1} /^Requests\/sec/ {r=$2} END {print n + 0, r + 0, c}' "$WORK/wrk.out"
}

run_h2load() {
  local cpu_sys
  cpu_sys=$(timed "$WORK/h2load.out" h2load -t1 -c10 -m10 -D "$DURATION" "$TLS_URL")
  awk -v c="$cpu_sys" '/^finished in/ {r=$4} /^requests:/ {n=$8} END {print n + 0, r + 0, c}' "$WORK/h2load.out"
}

client_closed_load_tester() { run_lt --url "$PLAIN_URL"; }
client_closed_wrk() { run_wrk "$PLAIN_URL"; }
client_closed_pipelined16_load_tester() { run_lt --url "$PLAIN_URL" --pipeline 16; }
client_closed_pipelined16_wrk() { run_wrk "$PLAIN_URL" -s "$WORK/pipeline16.lua"; }
client_open_loop_load_tester() { run_lt --url "$PLAIN_URL" --rate "$RATE"; }
client_open_loop_wrk2() { WRK=wrk2 run_wrk "$PLAIN_URL" -R "$RATE"; }
client_https11_load_tester() { run_lt --url "$TLS_URL" --ca "$TLS_DIR/cert.pem"; }
client_https11_wrk() { run_wrk "$TLS_URL"; }
client_h2_load_tester() { run_lt --url "$TLS_URL" --ca "$TLS_DIR/cert.pem" --http2 --concurrency 10 --streams 10; }
client_h2_h2load() { run_h2load; }

# client_missing PEER: why PEER cannot run here ("" when it can). wrk2 is
# never built or faked: without it the row says so.
client_missing() {
  case $1 in
    wrk2) have_tool wrk2 || echo "wrk2 not installed" ;;
    h2load) have_tool h2load || echo "h2load not installed ($(tool_hint h2load))" ;;
    load_tester_io_uring) echo "$URING_FALLBACK" ;;
  esac
}

# note_fallback ROUND SCENARIO WHO: if WHO's run fell back to epoll, says so
# once (a skip of the whole row) and returns 0; the next runs are skipped.
note_fallback() {
  [ -s "$WORK/lt.fallback" ] || return 1
  URING_FALLBACK=$(cat "$WORK/lt.fallback"); rm -f "$WORK/lt.fallback"
  sample_skip client "$2" "$3" "$URING_FALLBACK"
}

# round_order ROUND PEER: the pair's clients rotated by round, so none
# always inherits the target just after the same other.
round_order() {
  local all=("${LT_ENGINES[@]}" "$2") i n=3
  for i in 0 1 2; do printf '%s ' "${all[$(((i + $1 - 1) % n))]}"; done
}

# client_round ROUND: each pair, load_tester's engines and the peer in an
# order rotated by round.
client_round() {
  local round=$1 pair scen peer order n rps cpu who
  for pair in "${CLIENT_PAIRS[@]}"; do
    read -r scen peer <<<"$pair"
    read -r -a order <<<"$(round_order "$round" "$peer")"
    for who in "${order[@]}"; do
      if [ -n "$(client_missing "$who")" ]; then
        [ "$round" != 1 ] || sample_skip client "$scen" "$who" "$(client_missing "$who")"
        continue
      fi
      # Through a file, not < <(...): read may return before the process
      # substitution has written lt.fallback.
      run_client "$scen" "$who" >"$WORK/client.out"
      read -r n rps cpu sys <"$WORK/client.out"
      ! note_fallback "$round" "$scen" "$who" || continue
      printf '   round %d %-19s %-20s %10.0f req/s\n' "$round" "$scen" "$who" "$rps"
      sample_load client "$scen" "$who" "$round" "$n" "$rps" "$cpu" "$sys"
    done
  done
}
