# shellcheck shell=bash
# first_two_cpus: the first two CPUs this shell may run on (from its
# affinity mask, not 0..nproc-1), as "A B", or "" when there are fewer.
# Scripts pin the server to the first and the client to the second.
first_two_cpus() {
    local mask
    mask=$(taskset -cp $$ 2>/dev/null | awk -F': ' '{print $2}')
    python3 - "$mask" <<'PY'
import sys
cpus = []
for part in sys.argv[1].split(","):
    if part.strip():
        a, _, b = part.partition("-")
        cpus += range(int(a), int(b or a) + 1)
print(*(cpus[:2] if len(cpus) >= 2 else []))
PY
}
