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
