#!/usr/bin/env bash
# One real code change, judged by both tiers (issue 33): B is this tree's
# server with one extra allocation per GET /v1/status (the request id
# copied with strings.Clone after it is parsed, in server/app/data.go), A
# the same tree unchanged. RUNS gate runs of the whole scenarios file with
# --tiers time,cost; per scenario, each tier's verdicts and ratios, and the
# allocations per request each side made. The change is built in a
# temporary git worktree of HEAD; the working tree is not touched.
#
# Usage: make build && scripts/gate_alloc_change.sh
# Env: RUNS (5), SCENARIOS (testdata/gate_scenarios.toml), BUILD_DIR (build),
#      OUT (build/gate_alloc_change), GATE_ARGS (extra flags for every run).
set -euo pipefail
cd "$(dirname "$0")/.."

RUNS=${RUNS:-5}
SCENARIOS=${SCENARIOS:-testdata/gate_scenarios.toml}
BUILD_DIR=${BUILD_DIR:-build}
OUT=${OUT:-$BUILD_DIR/gate_alloc_change}
GATE_ARGS=${GATE_ARGS:-}
read -r -a extra_args <<<"$GATE_ARGS"
[[ "$RUNS" =~ ^[0-9]+$ ]] || { echo "gate_alloc_change: RUNS must be a count" >&2; exit 1; }
for bin in "$BUILD_DIR/gate" "$BUILD_DIR/load_tester"; do
  [ -x "$bin" ] || { echo "gate_alloc_change: $bin missing (run make build)" >&2; exit 1; }
done
mkdir -p "$OUT"
tree=$(mktemp -d)
trap 'git worktree remove --force "$tree" >/dev/null 2>&1 || rm -rf "$tree"' EXIT
git worktree add -q --detach "$tree" HEAD

# A: HEAD as it is; B: HEAD with the extra allocation.
(cd "$tree" && go build -trimpath -o "$OUT/weaseldb-a" ./cmd/weaseldb)
python3 - "$tree/server/app/data.go" <<'EOF'
import sys
p = sys.argv[1]; s = open(p).read()
old = "\th.enqueue(q, commit.KindStatus, &commit.Data{Status: sq})"
assert old in s, "server/app/data.go: the status request's enqueue moved; update this script"
s = s.replace(old, "\tsq.RequestID = strings.Clone(sq.RequestID) // the injected change: one allocation per status request\n" + old, 1)
s = s.replace('import (\n', 'import (\n\t"strings"\n', 1)
open(p, "w").write(s)
EOF
(cd "$tree" && gofmt -w server/app/data.go && go build -trimpath -o "$OUT/weaseldb-b" ./cmd/weaseldb)

for ((run = 1; run <= RUNS; run++)); do
  "$BUILD_DIR/gate" --scenarios "$SCENARIOS" --a "$OUT/weaseldb-a" --b "$OUT/weaseldb-b" --tiers time,cost --quiet \
    --json "$OUT/run-$run.json" "${extra_args[@]}" >"$OUT/run-$run.txt" 2>&1 || true
  echo "gate_alloc_change: run $run: $(tail -1 "$OUT/run-$run.txt")"
done

python3 - "$OUT" "$RUNS" <<'EOF' | tee "$OUT/alloc_change_table.md"
import json, os, statistics, sys
out, runs = sys.argv[1], int(sys.argv[2])
docs = []
for i in range(1, runs + 1):
    try:
        docs.append(json.load(open(os.path.join(out, f"run-{i}.json"))))
    except (OSError, ValueError):
        pass
print("| scenario | time: regression / pass / could not judge | time B/A (median) | cost: regression / pass / could not judge | cost B/A (median, range) | allocs/req A, B (median) |")
print("|---|---|---:|---|---|---|")
names = [s["name"] for s in docs[0]["scenarios"]] if docs else []
for n in names:
    ss = [s for d in docs for s in d["scenarios"] if s["name"] == n]
    tv = [s["decision"]["verdict"] for s in ss]
    tr = [s["ratio"]["ratio"] for s in ss if s.get("ratio", {}).get("ratio")]
    cs = [s["cost"] for s in ss if s.get("cost")]
    cv = [c["verdict"] for c in cs]
    cr = [c["ratio"] for c in cs if c.get("ratio")]
    aa = [c["a"]["allocs_per_request"] for c in cs]
    ab = [c["b"]["allocs_per_request"] for c in cs]
    cnt = lambda vs, a, b, c: f"{vs.count(a)} / {vs.count(b)} / {vs.count(c)}"
    med = lambda xs: f"{statistics.median(xs):.4f}" if xs else "-"
    rng = f"{min(cr):.4f}-{max(cr):.4f}" if cr else "-"
    al = f"{statistics.median(aa):.2f}, {statistics.median(ab):.2f}" if aa and ab else "-"
    print(f"| `{n}` | {cnt(tv, 'regression', 'pass', 'could not judge')} | {med(tr)} | {cnt(cv, 'regression', 'pass', 'could_not_judge')} | {med(cr)}, {rng} | {al} |")
EOF
