#!/bin/sh
# One load_tester instance of a distributed run (docs/distributed.md): runs
# load_tester with the arguments given, then prints its JSON result to stdout
# between two marker lines, so the result can be collected from the logs
# (kubectl logs, ssh) without a shared volume. The exit status is
# load_tester's.
#
# Usage: run-instance.sh [load_tester flags...]   (do not pass --json)
# LOAD_TESTER: the binary (default: load_tester on PATH).
# RESULT_DIR: where the JSON is kept as well (default: a temporary folder).
set -u
LT=${LOAD_TESTER:-load_tester}
DIR=${RESULT_DIR:-$(mktemp -d)}
mkdir -p "$DIR"
OUT="$DIR/result.json"
"$LT" "$@" --json "$OUT"
rc=$?
if [ -s "$OUT" ]; then
    echo "----- BEGIN load_tester result -----"
    cat "$OUT"
    echo "----- END load_tester result -----"
fi
exit $rc
