# shellcheck shell=bash
# Sourced by the scripts that drive wrk.
#
# write_pipeline_lua FILE DEPTH: a wrk script that sends DEPTH GET /ok
# requests in one write (pipelined).
write_pipeline_lua() {
  cat >"$1" <<LUA
init = function(args)
   local r = {}
   for i = 1, $2 do r[i] = wrk.format(nil, "/ok") end
   req = table.concat(r)
end
request = function() return req end
LUA
}

# wrk_cpu URL [WRK FLAGS...]: wrk -t1 -c$CONNS for $SECS seconds against
# URL (pinned and timed by cpu_timed, lib/cputime.sh; output in
# $WORK/out); prints "req_per_s cpu_s requests".
wrk_cpu() {
  local url=$1 cpu; shift
  cpu=$(cpu_timed "$WORK/out" wrk -t1 -c"$CONNS" -d"${SECS}s" "$@" "$url")
  awk -v t="$cpu" '/requests in/ {n=$1} /^Requests\/sec/ {r=$2} END {print r, t, n}' "$WORK/out"
}
