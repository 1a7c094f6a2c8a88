#!/usr/bin/env bash
# Every fuzz target of the module, one after another, for FUZZTIME each
# (its seed corpus and testdata/fuzz first, then new inputs). A failing
# target does not stop the pass: every failure is listed at the end and the
# exit status is 1 if there was any, so one broken parser cannot hide the
# others. Used by `make fuzz` (FUZZTIME=10s) and `make fuzz-ci` (2s).
#
# Targets are found by their declaration, `func FuzzX(f *testing.F)`, in the
# _test.go files git knows of, so no test binary is built just to list them.
set -uo pipefail
cd "$(dirname "$0")/.."

GO=${GO:-go}
FUZZTIME=${FUZZTIME:-10s}
start=$SECONDS
failed=()
ran=0

files=$( { git ls-files '*_test.go'; git ls-files -o --exclude-standard '*_test.go'; } 2>/dev/null | sort -u)
for dir in $(for f in $files; do dirname "$f"; done | sort -u); do
  targets=$(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)([A-Za-z_][A-Za-z0-9_]* \*testing\.F).*/\1/p' "$dir"/*_test.go | sort -u)
  for t in $targets; do
    echo "== ./$dir $t ($FUZZTIME)"
    ran=$((ran + 1))
    if ! "$GO" test -run '^$' -fuzz "^$t\$" -fuzztime "$FUZZTIME" "./$dir"; then
      failed+=("./$dir $t")
    fi
  done
done

echo "fuzz: $ran targets in $((SECONDS - start)) s, ${#failed[@]} failed"
if [ "${#failed[@]}" -gt 0 ]; then
  printf 'fuzz: FAILED %s\n' "${failed[@]}"
  echo "fuzz: a failing input, where one was found, is under the package's testdata/fuzz/<target>/; rerun it with go test -run '<target>/<file>' <package>"
  exit 1
fi
