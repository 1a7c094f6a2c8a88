# shellcheck shell=bash
# Sourced by compare_peers.sh: what a request costs in instructions
# (callgrind, the gate's cost-tier method: deterministic, so a ratio holds
# from machine to machine) and in system calls (strace -c -f), once a peer.

# cost_load PORT DEPTH RATE SECONDS [JSON]: load_tester on one connection at
# RATE for SECONDS, 16 a burst at DEPTH 16 (the gate's ok_pipelined cost
# shape); prints the requests answered.
cost_load() {
  local port=$1 depth=$2 rate=$3 secs=$4 json=${5:-$WORK/cost.json}
  local pipe=()
  [ "$depth" = 1 ] || pipe=(--pipeline "$depth" --burst "$depth")
  "${CLIENT_ON[@]}" "$BIN/load_tester" --port "$port" --path /ok --concurrency 1 --network-threads 1 --rate "$rate" \
    --duration "$secs" --drain 10s --timeout 10s "${pipe[@]}" --json "$json" --quiet >/dev/null 2>&1 || true
  python3 -c 'import json, sys
try: print(json.load(open(sys.argv[1]))["answered"])
except (OSError, ValueError, KeyError): print(0)' "$json"
}

# cost_server NAME DEPTH: a fresh NAME under callgrind, warmed up, its
# counters zeroed, COST_REQUESTS requests at COST_RATE (16 deep:
# COST_PIPELINED_REQUESTS at COST_PIPELINED_RATE, in bursts of 16: the
# gate's ok and ok_pipelined cost shapes), dumped, killed.
cost_server() {
  local name=$1 depth=$2 scen=ok port dir pid n
  [ "$depth" = 1 ] || scen=ok_pipelined$depth
  port=$(free_port); dir=$WORK/cost-$name-$depth
  mkdir -p "$dir"
  if ! START_TRIES=900 start_server "$name" "$port" "$dir" env GODEBUG="$COST_GODEBUG" GOGC=off valgrind --tool=callgrind \
      --callgrind-out-file="$dir/cg.%p" --vgdb-prefix="$dir/vgdb" --log-file="$dir/valgrind.log"; then
    sample_skip server "$scen" "$name" "did not start under callgrind" instructions_per_request; return
  fi
  pid=$SERVED_BY
  cost_load "$port" "$depth" 100 1 "$dir/warm.json" >/dev/null
  callgrind_control --vgdb-prefix="$dir/vgdb" -z "$pid" >/dev/null 2>&1
  local requests=$COST_REQUESTS rate=$COST_RATE
  [ "$depth" = 1 ] || { requests=$COST_PIPELINED_REQUESTS; rate=$COST_PIPELINED_RATE; }
  n=$(cost_load "$port" "$depth" "$rate" "$(awk -v n="$requests" -v r="$rate" 'BEGIN {print n / r}')")
  callgrind_control --vgdb-prefix="$dir/vgdb" -d "$pid" >/dev/null 2>&1
  kill -9 "$pid" 2>/dev/null; wait "$pid" 2>/dev/null || true
  count_instructions server "$scen" "$name" "$n" "$dir/cg.$pid.1"
}

# cost_client SCENARIO PEER: the client's whole run of COST_CLIENT_S
# seconds on COST_CONNS connections under callgrind (start and TLS
# handshakes included, spread over the run's requests). Fewer connections
# than under load: 100 TLS handshakes under valgrind (4.5 M instructions
# each) took longer than a 5 s run, and wrk answered nothing.
# load_tester runs on its epoll engine here, whatever the row's engine:
# valgrind 3.19 hangs in io_uring_enter (each_peer skips the io_uring row).
cost_client() {
  local scen=$1 peer=$2 dir=$WORK/cost-$1-$2 n rps cpu
  mkdir -p "$dir"
  [ "$peer" != load_tester ] || echo "   note: load_tester runs --io-backend epoll under callgrind (valgrind 3.19 hangs in io_uring_enter)"
  CLIENT_WRAP=(env GODEBUG="$COST_GODEBUG" GOGC=off valgrind --tool=callgrind --callgrind-out-file="$dir/cg.out" --log-file="$dir/valgrind.log")
  # A wrk request slower than wrk's 2 s under valgrind is not lost.
  read -r n rps cpu < <(LT_IO_BACKEND=epoll DURATION=$COST_CLIENT_S CONNS=$COST_CONNS WRK_TIMEOUT=30s run_client "$scen" "$peer")
  CLIENT_WRAP=()
  count_instructions client "$scen" "$peer" "$n" "$dir/cg.out"
  : "$rps" "$cpu"
}

# count_instructions SIDE SCENARIO PEER REQUESTS DUMP: prints and records
# what a callgrind dump counted, after the cost tier's filter and before.
count_instructions() {
  local kept all
  read -r kept all < <("$PEERS" callgrind "$5" 2>/dev/null || echo 0 0)
  printf '   %-19s %-20s %12.0f instructions/request (%s before the filter, %s requests)\n' "$2" "$3" \
    "$(awk -v c="$kept" -v n="$4" 'BEGIN {print (n > 0 ? c / n : 0)}')" "$(awk -v c="$all" -v n="$4" 'BEGIN {printf "%.0f", (n > 0 ? c / n : 0)}')" "$4"
  sample_count instructions "$1" "$2" "$3" "$4" "$kept" "$all"
}

# strace_server NAME DEPTH: strace -c -f attached to the running server
# over a STRACE_S-second wrk run (strace slows the server down, so each
# read may find more waiting: a floor on batching, not its speed).
strace_server() {
  local name=$1 depth=$2 scen=ok out=$WORK/strace-$1-$2 spid n rps
  [ "$depth" = 1 ] || scen=ok_pipelined$depth
  strace -c -f -o "$out" -p "${SERVER_PID[$name]}" 2>/dev/null &
  spid=$!; PIDS+=("$spid")
  sleep 0.5
  read -r n rps < <(WRK_S=$STRACE_S wrk_load "http://127.0.0.1:${SERVER_PORT[$name]}/ok" "$depth")
  kill -INT "$spid" 2>/dev/null; wait "$spid" 2>/dev/null || true
  count_syscalls server "$scen" "$name" "$n" "$out"
  : "$rps"
}

# strace_client SCENARIO PEER: the client's whole run under strace -c -f
# (io_uring's too: its io_uring_enter calls are counted like any other).
strace_client() {
  local scen=$1 peer=$2 out=$WORK/strace-$1-$2 n rps cpu
  CLIENT_WRAP=(strace -c -f -o "$out")
  read -r n rps cpu < <(DURATION=$STRACE_S run_client "$scen" "$peer")
  CLIENT_WRAP=()
  count_syscalls client "$scen" "$peer" "$n" "$out"
  : "$rps" "$cpu"
}

# count_syscalls SIDE SCENARIO PEER REQUESTS SUMMARY: prints and records
# the system calls an strace -c summary counted.
count_syscalls() {
  local count
  count=$("$PEERS" strace "$5" 2>/dev/null || echo 0)
  printf '   %-19s %-20s %8.2f system calls/request\n' "$2" "$3" "$(awk -v c="$count" -v n="$4" 'BEGIN {print (n > 0 ? c / n : 0)}')"
  sample_count syscalls "$1" "$2" "$3" "$4" "$count"
}
