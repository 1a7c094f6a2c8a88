#!/usr/bin/env bash
# Runs one load_tester instance on each host of a host list over ssh, all
# with the same --start-at, brings their results back and merges them
# (docs/distributed.md).
#
# Usage: deploy/ssh/run.sh HOSTS_FILE OUT_DIR [load_tester flags...]
#   HOSTS_FILE  one ssh destination per line ([user@]host); # comments allowed
#   OUT_DIR     gets <host>.json and <host>.log per instance, merged.json, merged.hlog
#   flags       the load, the same for every instance (no --json, --start-at or --instance)
# LEAD (default 10) seconds from now to the common start: enough for every
# host to connect and warm up (add --warmup to the flags).
# SSH (default "ssh -o BatchMode=yes") is the remote command runner;
# REMOTE_LOAD_TESTER (default load_tester) the binary on the hosts and
# LOAD_TESTER (default load_tester) the local one that merges.
# Exit status: the merge's (1 when the merged run failed); 1 when an
# instance wrote no result.
set -euo pipefail
[ $# -ge 2 ] || { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2; }
HOSTS_FILE=$1 OUT=$2
shift 2
SSH=${SSH:-ssh -o BatchMode=yes}
REMOTE_LT=${REMOTE_LOAD_TESTER:-load_tester}
LT=${LOAD_TESTER:-load_tester}
LEAD=${LEAD:-10}

mapfile -t HOSTS < <(sed 's/#.*//; s/[[:space:]]*$//; /^$/d' "$HOSTS_FILE")
[ ${#HOSTS[@]} -gt 0 ] || { echo "ssh/run: no hosts in $HOSTS_FILE" >&2; exit 2; }
mkdir -p "$OUT"
START=$(date -u -d "+$LEAD seconds" +%Y-%m-%dT%H:%M:%S.%3NZ)
ID=lt-$(date +%s)-$$
quote() { printf '%q ' "$@"; }
echo "ssh/run: ${#HOSTS[@]} instances, measured window opens at $START"

pids=()
for host in "${HOSTS[@]}"; do
    name=${host#*@}
    # The remote shell runs the instance, keeps its JSON in /tmp (named by
    # run and host, in case hosts share a file system), and prints it
    # afterwards on a second connection (no scp needed).
    $SSH "$host" "$(quote "$REMOTE_LT" "$@" --start-at "$START" --instance "$name" --json "/tmp/$ID-$name.json")" \
        >"$OUT/$name.log" 2>&1 &
    pids+=($!)
done
failed=0
inputs=()
for i in "${!HOSTS[@]}"; do
    host=${HOSTS[$i]} name=${HOSTS[$i]#*@}
    wait "${pids[$i]}" || echo "ssh/run: $name: load_tester exited $? (see $OUT/$name.log)" >&2
    if $SSH "$host" "$(quote cat "/tmp/$ID-$name.json") && $(quote rm -f "/tmp/$ID-$name.json")" >"$OUT/$name.json" 2>/dev/null && [ -s "$OUT/$name.json" ]; then
        inputs+=("$OUT/$name.json")
    else
        echo "ssh/run: $name wrote no result (see $OUT/$name.log)" >&2
        rm -f "$OUT/$name.json"
        failed=1
    fi
done
[ ${#inputs[@]} -gt 0 ] || { echo "ssh/run: no results" >&2; exit 1; }
set +e
"$LT" merge --json "$OUT/merged.json" --hdr-log "$OUT/merged.hlog" "${inputs[@]}"
rc=$?
set -e
[ $failed = 0 ] || exit 1
exit $rc
