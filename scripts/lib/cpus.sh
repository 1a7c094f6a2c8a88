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

# pin_server_and_client [SERVER_NAME]: with PIN=1 (the default) and two
# CPUs allowed, sets SERVER_ON=(taskset -c FIRST) and CLIENT_ON=(taskset -c
# SECOND), and PINNED to a line saying so; otherwise leaves both empty
# (PINNED="unpinned").
pin_server_and_client() {
    local first second
    SERVER_ON=(); CLIENT_ON=(); PINNED="unpinned"
    read -r first second < <(first_two_cpus) || true
    if [ "${PIN:-1}" = 1 ] && [ -n "$second" ]; then
        SERVER_ON=(taskset -c "$first"); CLIENT_ON=(taskset -c "$second")
        PINNED="${1:-the server} on CPU $first, the clients on CPU $second"
    fi
}
