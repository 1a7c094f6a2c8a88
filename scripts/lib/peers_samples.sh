# shellcheck shell=bash
# Sourced by compare_peers.sh: the samples it writes, one JSON object a
# line to $SAMPLES, which `peers table` (internal/peertable) reads.

# json_str TEXT: TEXT as a JSON string.
json_str() {
  local s=${1//\\/\\\\}
  s=${s//\"/\\\"}
  printf '"%s"' "${s//$'\n'/ }"
}

# sample_load SIDE SCENARIO PEER ROUND REQUESTS REQ_PER_S CPU_NS SYS_NS
# [SWITCHES]: one round of one peer (SYS_NS: the system part of CPU_NS); a
# run that answered nothing is written as a note.
sample_load() {
  local side=$1 scen=$2 peer=$3 round=$4 n=$5 rps=$6 cpu=$7 sys=$8 sw=${9:-}
  if ! awk -v n="$n" -v r="$rps" 'BEGIN {exit !(n > 0 && r > 0)}'; then
    sample_skip "$side" "$scen" "$peer" "answered nothing (see the run's output above)" "round $round"
    return
  fi
  printf '{"kind":"load","side":"%s","scenario":"%s","peer":"%s","round":%d,"requests":%s,"seconds":%s,"cpu_ns":%s,"sys_ns":%s%s}\n' \
    "$side" "$scen" "$peer" "$round" "$n" "$(awk -v n="$n" -v r="$rps" 'BEGIN {printf "%.6f", n / r}')" "$cpu" "$sys" \
    "${sw:+,\"switches\":$sw}" >>"$SAMPLES"
}

# sample_count KIND SIDE SCENARIO PEER REQUESTS COUNT [COUNT_ALL]: an
# instructions or syscalls count over REQUESTS requests (COUNT_ALL: the
# instructions before the cost tier's filter).
sample_count() {
  local kind=$1 side=$2 scen=$3 peer=$4 n=$5 count=$6 all=${7:-}
  if ! awk -v n="$n" -v c="$count" 'BEGIN {exit !(n > 0 && c > 0)}'; then
    sample_skip "$side" "$scen" "$peer" "the count failed (${count:-nothing} over ${n:-no} requests)" "$kind"
    return
  fi
  printf '{"kind":"%s","side":"%s","scenario":"%s","peer":"%s","requests":%s,"count":%s%s}\n' \
    "$kind" "$side" "$scen" "$peer" "$n" "$count" "${all:+,\"count_all\":$all}" >>"$SAMPLES"
}

# sample_skip SIDE SCENARIO PEER NOTE [METRIC]: a peer (or one measurement
# of it, METRIC) not measured, and why: the table prints the reason.
sample_skip() {
  printf '{"kind":"skip","side":"%s","scenario":"%s","peer":"%s","note":%s%s}\n' \
    "$1" "$2" "$3" "$(json_str "$4")" "${5:+,\"metric\":$(json_str "$5")}" >>"$SAMPLES"
  echo "   $1 $2 $3: ${5:+$5: }$4"
}
