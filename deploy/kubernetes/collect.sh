#!/usr/bin/env bash
# Collects the results of the Indexed Job deploy/kubernetes/load-tester-job.yaml
# from its pods' logs and merges them (docs/distributed.md).
#
# Usage: deploy/kubernetes/collect.sh [JOB] [OUT_DIR]   (defaults: load-tester, results)
# Waits for the Job to finish, writes OUT_DIR/<pod>.json per instance, then
# OUT_DIR/merged.json and OUT_DIR/merged.hlog with `load_tester merge`, whose
# summary it prints; its exit status is the merge's.
# KUBECTL (default kubectl) and LOAD_TESTER (default load_tester) name the tools.
set -euo pipefail
JOB=${1:-load-tester}
OUT=${2:-results}
KUBECTL=${KUBECTL:-kubectl}
LT=${LOAD_TESTER:-load_tester}
BEGIN='----- BEGIN load_tester result -----'
END='----- END load_tester result -----'

mkdir -p "$OUT"
# Complete or failed, the logs are what there is to collect.
$KUBECTL wait --for=condition=complete --timeout=30m "job/$JOB" >/dev/null 2>&1 ||
    echo "collect: job/$JOB did not complete; collecting what its pods logged" >&2
pods=$($KUBECTL get pods -l "job-name=$JOB" -o name)
[ -n "$pods" ] || { echo "collect: no pods for job/$JOB" >&2; exit 1; }
inputs=()
for pod in $pods; do
    name=${pod#pod/}
    $KUBECTL logs "$pod" | sed -n "/^$BEGIN\$/,/^$END\$/p" | sed '1d;$d' >"$OUT/$name.json"
    if [ -s "$OUT/$name.json" ]; then
        inputs+=("$OUT/$name.json")
    else
        echo "collect: $pod logged no result (see kubectl logs $pod)" >&2
        rm -f "$OUT/$name.json"
    fi
done
[ ${#inputs[@]} -gt 0 ] || { echo "collect: no results in the logs of job/$JOB" >&2; exit 1; }
exec "$LT" merge --json "$OUT/merged.json" --hdr-log "$OUT/merged.hlog" "${inputs[@]}"
