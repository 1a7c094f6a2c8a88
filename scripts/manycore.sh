#!/usr/bin/env bash
# Run the dedicated-core path in a QEMU guest with many CPUs (16 by
# default), check what ran where, and bring the run directory back
# (docs/manycore.md). `make manycore` runs it; CI runs it after `make test`.
#
# It builds static binaries (CGO_ENABLED=0), boots the host's kernel with an
# initramfs of busybox and those binaries, and inside the guest runs the
# wait-strategy comparison on shared and dedicated cores and the report's
# two setups as planned for the guest's CPUs (the seed's, with its 8 I/O
# loops, and the fitted one, pinned), with short durations; then `report
# check` reads every pinned thread back from /proc, each event loop's
# connections and requests, GOMAXPROCS, the request accounting and the idle
# CPU per strategy, into checks.json. The run directory comes back into OUT
# (wait_strategies.json, setups.json, manifest.json, checks.json, every raw
# artifact), and `report --run OUT` renders it as a functional check,
# OUT/manycore_report.md: the guest's CPUs are virtual (emulated under
# TCG), so nothing in it is a measurement of speed.
#
#   scripts/manycore.sh                 # 16 guest CPUs; KVM when it works, else TCG
#   CPUS=32 ACCEL=tcg scripts/manycore.sh
#
# Exits 1 when a run or a check failed, or the guest did not come back; 0
# with one line saying so when QEMU, a kernel image or a static busybox is
# missing (apt-get install qemu-system-x86 linux-image-amd64 busybox-static),
# unless MANYCORE_REQUIRED=1.
#
# Knobs (environment, defaults in brackets):
#   CPUS [16]               guest CPUs (with TOPOLOGY=smt-numa at least 16: 8 physical cores)
#   TOPOLOGY [smt-numa]     smt-numa: 2 sockets, each a NUMA node with half the memory, 2 hyper-threads a
#                           core (-smp CPUS,sockets=2,cores=CPUS/4,threads=2), so that placement by physical
#                           core and node is checked; flat: CPUS single-thread cores, one node (the
#                           fallback placement, as before)
#   MEM [2048]              guest memory, MiB
#   ACCEL [auto]            kvm, tcg, or auto: KVM when a short probe boots (KVM_PROBE_TIMEOUT s), else TCG
#   KVM_PROBE_TIMEOUT [20]  seconds the KVM probe may take
#   QEMU [auto]             qemu-system-x86_64 (auto: on PATH)
#   KERNEL [auto]           the kernel image (auto: the newest readable /boot/vmlinuz-*)
#   BUSYBOX [auto]          a statically linked busybox (auto: busybox on PATH)
#   OUT [build/manycore]    where the run directory lands (replaced)
#   BUILD_DIR [build]       the static binaries go to BUILD_DIR/manycore-bin, the guest's files to BUILD_DIR/manycore-guest
#   GUEST_TIMEOUT [900]     seconds the guest may run before it is stopped (a failure)
#   WS_DURATION [5]         seconds of load per wait-strategy server run (enough connections for every loop)
#   SETUP_DURATION [6]      seconds of load per setup run
#   SETUP_WARMUP [3]        seconds of warm-up per setup run (the seed's 2,000 connections take seconds to open in TCG)
#   ROUNDS [1]              rounds of the setups
#   WARMUP [1]  IDLE [1]  IDLE_CONNS [20]  DRAIN [10]  REQUEST_TIMEOUT [60]  READY_TIMEOUT [120]
#   WS_IO_THREADS [auto]    the comparison's I/O loops: 8 (the seed's) where CPUS allows, else fewer
#   WS_LOAD_THREADS [2]  WS_CONCURRENCY [400]
#   WS_REQUESTS_PER_CONN [1] the comparison's load_tester reconnects after this many requests, so that
#                           connections keep arriving while the loops are busy and every loop is offered
#                           some (0: keep-alive throughout; connections opened in one burst while most
#                           loops wait land on the first loops: EPOLLEXCLUSIVE wakes the first waiter)
#   MANYCORE_REQUIRED [0]   1: a missing QEMU, kernel or busybox is a failure, not a skip
set -uo pipefail

if (($# > 0)); then
    if [[ $1 == -h || $1 == --help ]]; then
        sed -n '2,/^set -uo/{/^set -uo/d;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"
        exit 0
    fi
    echo "manycore: takes no arguments (knobs are environment variables; see --help)" >&2
    exit 2
fi

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT" || exit 1
T_START=$(date +%s)

CPUS=${CPUS:-16}
TOPOLOGY=${TOPOLOGY:-smt-numa}
QEMU=${QEMU:-auto}
MEM=${MEM:-2048}
ACCEL=${ACCEL:-auto}
KVM_PROBE_TIMEOUT=${KVM_PROBE_TIMEOUT:-20}
KERNEL=${KERNEL:-auto}
BUSYBOX=${BUSYBOX:-auto}
OUT=${OUT:-build/manycore}
BUILD_DIR=${BUILD_DIR:-build}
GUEST_TIMEOUT=${GUEST_TIMEOUT:-900}
WS_DURATION=${WS_DURATION:-5}
SETUP_DURATION=${SETUP_DURATION:-6}
SETUP_WARMUP=${SETUP_WARMUP:-3}
ROUNDS=${ROUNDS:-1}
WARMUP=${WARMUP:-1}
IDLE=${IDLE:-1}
IDLE_CONNS=${IDLE_CONNS:-20}
DRAIN=${DRAIN:-10}
REQUEST_TIMEOUT=${REQUEST_TIMEOUT:-60}
READY_TIMEOUT=${READY_TIMEOUT:-120}
WS_LOAD_THREADS=${WS_LOAD_THREADS:-2}
WS_CONCURRENCY=${WS_CONCURRENCY:-400}
WS_REQUESTS_PER_CONN=${WS_REQUESTS_PER_CONN:-1}
MANYCORE_REQUIRED=${MANYCORE_REQUIRED:-0}

log() { printf '=== manycore: %s\n' "$*" >&2; }
die() { printf 'manycore: FAILED: %s\n' "$*" >&2; exit 1; }
# skip REASON: a prerequisite is missing: one line, exit 0 (1 when required).
skip() {
    if [[ $MANYCORE_REQUIRED == 1 ]]; then
        die "$* (MANYCORE_REQUIRED=1)"
    fi
    echo "manycore: skipped: $*; the dedicated-core path was not run"
    exit 0
}

for knob in CPUS MEM KVM_PROBE_TIMEOUT GUEST_TIMEOUT WS_DURATION SETUP_DURATION SETUP_WARMUP ROUNDS WARMUP IDLE IDLE_CONNS \
    DRAIN REQUEST_TIMEOUT READY_TIMEOUT WS_LOAD_THREADS WS_CONCURRENCY WS_REQUESTS_PER_CONN; do
    [[ ${!knob} =~ ^[0-9]+$ ]] || die "$knob must be a non-negative integer, got '${!knob}'"
done
# A dedicated server run needs 1 I/O loop, 4 stage threads, 2 load-tester
# threads and 1 core for the rest: 8 physical cores.
case $TOPOLOGY in
smt-numa)
    ((CPUS >= 16 && CPUS % 4 == 0)) || die "CPUS must be a multiple of 4, at least 16 with TOPOLOGY=smt-numa (8 physical cores of 2 hyper-threads), got $CPUS"
    CORES=$((CPUS / 2))
    ((MEM >= 512 && MEM % 2 == 0)) || die "MEM must be even and at least 512 (half a node) with TOPOLOGY=smt-numa, got $MEM"
    SMP_ARGS=(-smp "$CPUS,sockets=2,cores=$((CPUS / 4)),threads=2"
        -object "memory-backend-ram,id=mem0,size=$((MEM / 2))M" -object "memory-backend-ram,id=mem1,size=$((MEM / 2))M"
        -numa "node,nodeid=0,memdev=mem0,cpus=0-$((CPUS / 2 - 1))" -numa "node,nodeid=1,memdev=mem1,cpus=$((CPUS / 2))-$((CPUS - 1))")
    ;;
flat)
    ((CPUS >= 8)) || die "CPUS must be at least 8 with TOPOLOGY=flat, got $CPUS"
    CORES=$CPUS
    SMP_ARGS=(-smp "$CPUS")
    ;;
*) die "TOPOLOGY must be smt-numa or flat, got '$TOPOLOGY'" ;;
esac
((WS_DURATION >= 2 && SETUP_DURATION >= 2 && ROUNDS >= 1 && IDLE >= 1)) ||
    die "WS_DURATION and SETUP_DURATION must be at least 2, ROUNDS and IDLE at least 1"
case $ACCEL in auto | kvm | tcg) ;; *) die "ACCEL must be auto, kvm or tcg, got '$ACCEL'" ;; esac
# The comparison's I/O loops: the seed's 8 on physical cores of their own
# where the guest has room (loops + 4 stage threads + load threads + 1 for
# the rest).
if [[ -z ${WS_IO_THREADS:-} ]]; then
    WS_IO_THREADS=$((CORES - 4 - WS_LOAD_THREADS - 1))
    ((WS_IO_THREADS > 8)) && WS_IO_THREADS=8
    ((WS_IO_THREADS < 1)) && WS_IO_THREADS=1
fi

# shellcheck source=lib/tools.sh
. "$ROOT/scripts/lib/tools.sh"

# --- prerequisites: QEMU, a kernel, a static busybox (a skip), Go (a failure)
if [[ $QEMU == auto ]]; then
    QEMU=$(command -v qemu-system-x86_64) ||
        skip "qemu-system-x86_64 is not installed (apt-get install qemu-system-x86)"
fi
[[ -x $QEMU ]] || skip "$QEMU is not installed (apt-get install qemu-system-x86)"
if [[ $KERNEL == auto ]]; then
    KERNEL=
    # shellcheck disable=SC2012 # names like vmlinuz-6.1.0-57-amd64; sort -V orders them
    for k in $(ls /boot/vmlinuz-* 2>/dev/null | sort -V -r); do
        if [[ -r $k ]]; then
            KERNEL=$k
            break
        fi
    done
    if [[ -z $KERNEL ]]; then
        if compgen -G '/boot/vmlinuz-*' >/dev/null; then
            skip "no readable kernel image in /boot ($(echo /boot/vmlinuz-*) not readable: sudo chmod a+r /boot/vmlinuz-*)"
        fi
        skip "no kernel image in /boot (apt-get install linux-image-amd64)"
    fi
fi
[[ -r $KERNEL ]] || skip "kernel image $KERNEL is not readable"
if [[ $BUSYBOX == auto ]]; then
    BUSYBOX=$(command -v busybox) || skip "busybox is not installed (apt-get install busybox-static)"
fi
[[ -x $BUSYBOX ]] || skip "busybox $BUSYBOX is not executable"
# The guest has no libc: busybox must be static (Debian's busybox package is
# not; busybox-static is).
is_static() {
    if have_tool file; then
        file -L "$1" | grep -q 'statically linked'
    elif have_tool ldd; then
        ! ldd "$1" >/dev/null 2>&1
    fi
}
is_static "$BUSYBOX" || skip "$BUSYBOX is not statically linked (apt-get install busybox-static)"
have_tool go || die "go is not installed (https://go.dev/dl): it builds the guest's binaries"
if have_tool cpio; then
    CPIO=(cpio)
else
    CPIO=("$BUSYBOX" cpio)
fi

HOST_CPUS=$(nproc)
HOST_CPU_MODEL=$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo 2>/dev/null)
BIN=$BUILD_DIR/manycore-bin
GUEST=$BUILD_DIR/manycore-guest
mkdir -p "$BIN" "$(dirname "$OUT")" || die "cannot create $BIN"
rm -rf "$GUEST"
mkdir -p "$GUEST" || die "cannot create $GUEST"
GUEST=$(cd "$GUEST" && pwd)

# --- build: static, for the guest (and for this host when it is x86-64)
log "building static binaries into $BIN (CGO_ENABLED=0 GOARCH=amd64)"
CGO_ENABLED=0 GOOS=linux GOARCH=amd64 go build -trimpath -ldflags='-s -w' -o "$BIN/" \
    ./cmd/weaseldb ./cmd/load_tester ./cmd/bench_pipeline ./cmd/bench_cpu_work ./cmd/report ||
    die "go build failed"
HOST_REPORT=$BIN/report
if [[ $(uname -m) != x86_64 ]]; then
    HOST_REPORT=$BUILD_DIR/manycore-host/report
    go build -o "$HOST_REPORT" ./cmd/report || die "go build ./cmd/report (for this host) failed"
fi

# --- the initramfs: busybox, /init, the binaries, the seed's config, the knobs
# initramfs DIR INIT: an initramfs of busybox and INIT as /init, files in DIR.
initramfs() {
    local dir=$1 init=$2
    mkdir -p "$dir/bin" "$dir/proc" "$dir/sys" "$dir/dev" "$dir/tmp" "$dir/run" || return 1
    cp "$BUSYBOX" "$dir/bin/busybox" && cp "$init" "$dir/init" && chmod 755 "$dir/init" || return 1
}
# cpio_of DIR FILE: DIR as a newc archive (uncompressed: QEMU loads it as it is).
cpio_of() { (cd "$1" && find . | LC_ALL=C sort | "${CPIO[@]}" -o -H newc 2>/dev/null) >"$2"; }

ROOTFS=$GUEST/root
initramfs "$ROOTFS" scripts/manycore/init || die "cannot stage the guest's files in $ROOTFS"
mkdir -p "$ROOTFS/mc/bin" "$ROOTFS/mc/testdata"
cp "$BIN"/{weaseldb,load_tester,bench_pipeline,bench_cpu_work,report} "$ROOTFS/mc/bin/" &&
    cp testdata/test_benchmark_config.toml "$ROOTFS/mc/testdata/" || die "cannot copy the binaries into $ROOTFS"

# --- the accelerator: KVM when a short boot under it works, else TCG
# probe_kvm: boot the kernel under KVM with an /init that prints a marker
# and powers off; KVM that aborts, hangs or is not ours to open fails it.
probe_kvm() {
    [[ -r /dev/kvm && -w /dev/kvm ]] || { log "KVM: /dev/kvm is not usable by $(id -un)"; return 1; }
    local dir=$GUEST/probe
    mkdir -p "$dir"
    printf '#!/bin/busybox sh\n/bin/busybox echo MANYCORE-KVM-OK\n/bin/busybox poweroff -f\n' >"$dir/init.sh"
    initramfs "$dir/root" "$dir/init.sh" && cpio_of "$dir/root" "$dir/probe.cpio" || return 1
    # In a subshell whose stderr is the log: a QEMU that aborts (as KVM can
    # on a nested host) would otherwise have this shell print "Aborted".
    (timeout -k 2 "$KVM_PROBE_TIMEOUT" "$QEMU" -accel kvm -cpu host -smp 2 -m 256 -nodefaults -no-user-config \
        -display none -serial stdio -no-reboot -kernel "$KERNEL" -initrd "$dir/probe.cpio" \
        -append "console=ttyS0 quiet panic=-1" </dev/null) >"$dir/probe.log" 2>&1
    local rc=$?
    if grep -q MANYCORE-KVM-OK "$dir/probe.log"; then
        return 0
    fi
    log "KVM: the probe did not boot (exit $rc$( ((rc == 124)) && echo ", stopped after ${KVM_PROBE_TIMEOUT} s"): $(grep -m1 -iE 'error|fail|assert' "$dir/probe.log" | cut -c1-160))"
    return 1
}
case $ACCEL in
auto)
    if probe_kvm; then ACCEL=kvm; else ACCEL=tcg; fi
    ;;
kvm)
    probe_kvm || die "ACCEL=kvm, but the KVM probe failed (see $GUEST/probe/probe.log)"
    ;;
esac
if [[ $ACCEL == kvm ]]; then
    ACCEL_ARGS=(-accel kvm -cpu host)
else
    # An Intel-flavoured guest CPU: an AMD-flavoured one (TCG's max on an
    # AMD host) shows hyper-thread siblings only with topoext, which TCG
    # does not offer, so the guest saw every thread as a core; Intel's
    # topology leaf (0xB) shows them.
    ACCEL_ARGS=(-accel tcg,thread=multi -cpu max,vendor=GenuineIntel)
fi

{
    for v in CPUS TOPOLOGY ACCEL HOST_CPUS HOST_CPU_MODEL WS_DURATION SETUP_DURATION SETUP_WARMUP ROUNDS WARMUP IDLE IDLE_CONNS DRAIN \
        REQUEST_TIMEOUT READY_TIMEOUT WS_IO_THREADS WS_LOAD_THREADS WS_CONCURRENCY WS_REQUESTS_PER_CONN; do
        printf '%s=%q\n' "$v" "${!v}"
    done
} >"$ROOTFS/mc/params"
cpio_of "$ROOTFS" "$GUEST/initrd.cpio" || die "cannot write the initramfs $GUEST/initrd.cpio"

# --- boot: the guest's console on stdout (and console.log), the run
# directory back on its second serial port
log "booting $CPUS guest CPUs ($ACCEL) on $HOST_CPUS host CPUs: $KERNEL, $(du -m "$GUEST/initrd.cpio" | cut -f1) MiB initramfs, at most $GUEST_TIMEOUT s"
: >"$GUEST/ttyS1.out"
# The CPU QEMU used on this host: `times` (run in this shell: a $(...) would
# ask a subshell, whose children are not QEMU) before and after, children's line.
child_cpu_s() { awk 'NR == 2 { split($0, f, /[ms ]+/); print f[1] * 60 + f[2] + f[3] * 60 + f[4] }' "$GUEST/times"; }
times >"$GUEST/times"
CPU0=$(child_cpu_s)
T0=$(date +%s)
timeout -k 10 "$GUEST_TIMEOUT" "$QEMU" "${ACCEL_ARGS[@]}" "${SMP_ARGS[@]}" -m "$MEM" -nodefaults -no-user-config \
    -display none -serial stdio -serial "file:$GUEST/ttyS1.out" -no-reboot \
    -kernel "$KERNEL" -initrd "$GUEST/initrd.cpio" -append "console=ttyS0 quiet panic=-1" </dev/null |
    tee "$GUEST/console.log"
QEMU_RC=${PIPESTATUS[0]}
GUEST_WALL=$(($(date +%s) - T0))
times >"$GUEST/times"
CPU1=$(child_cpu_s)
QEMU_CPU=$(awk -v a="$CPU0" -v b="$CPU1" 'BEGIN { printf "%.1f", b - a }')
((QEMU_RC == 124)) && log "the guest ran past GUEST_TIMEOUT=$GUEST_TIMEOUT s and was stopped"
((QEMU_RC != 0)) && log "qemu exited $QEMU_RC"

# --- the run directory: decode it into OUT
PAYLOAD=$GUEST/payload
rm -rf "$PAYLOAD"
mkdir -p "$PAYLOAD"
if ! grep -q '^MC-END' <(tr -d '\r' <"$GUEST/ttyS1.out"); then
    tail -n 30 "$GUEST/console.log" >&2
    die "the guest sent nothing back (qemu exit $QEMU_RC after $GUEST_WALL s; its console: $GUEST/console.log)"
fi
tr -d '\r' <"$GUEST/ttyS1.out" | sed -n '/^MC-BEGIN$/,/^MC-END$/{/^MC-/d;p}' | base64 -d | tar -xz -C "$PAYLOAD" ||
    die "the run directory the guest sent back does not decode ($GUEST/ttyS1.out)"
rm -rf "$OUT"
mv "$PAYLOAD/mc" "$OUT" || die "cannot move the run directory into $OUT"
cp "$GUEST/console.log" "$OUT/console.log"
cat >"$OUT/host.json" <<JSON
{
  "version": 1,
  "accel": "$ACCEL",
  "emulated": $([[ $ACCEL == tcg ]] && echo true || echo false),
  "guest_cpus": $CPUS,
  "topology": "$TOPOLOGY",
  "guest_memory_mib": $MEM,
  "host_cpus": $HOST_CPUS,
  "host_cpu_model": "$(printf '%s' "$HOST_CPU_MODEL" | tr -d '"\\')",
  "qemu": "$("$QEMU" --version | head -1 | tr -d '"\\')",
  "kernel_image": "$KERNEL",
  "guest_wall_s": $GUEST_WALL,
  "qemu_cpu_s": $QEMU_CPU,
  "qemu_exit_code": $QEMU_RC
}
JSON

# --- verdict: every step ran, every check passed, the report renders
FAILED=()
while IFS=$'\t' read -r name rc wall _; do
    [[ $rc == 0 ]] || FAILED+=("step $name exited $rc")
    log "guest step $name: exit $rc, $wall s"
done <"$OUT/steps.tsv"
[[ -s $OUT/checks.json ]] || FAILED+=("no checks.json (see $OUT/check.log)")
"$HOST_REPORT" --run "$OUT" || FAILED+=("report --run $OUT (the checks, or the rendering)")
((QEMU_RC == 0)) || FAILED+=("qemu exited $QEMU_RC")
SUMMARY=$(grep -m1 -o '"summary": "[^"]*"' "$OUT/checks.json" 2>/dev/null | cut -d'"' -f4)
WALL=$(($(date +%s) - T_START))
WHAT="$CPUS guest CPUs ($ACCEL$([[ $ACCEL == tcg ]] && echo ", emulated") on $HOST_CPUS host CPUs; guest ${GUEST_WALL} s, qemu ${QEMU_CPU} s of host CPU)"
if ((${#FAILED[@]} > 0)); then
    printf 'manycore: FAILED: %s: %s; %s; artifacts in %s (%d s in all)\n' "$WHAT" "${SUMMARY:-no checks}" \
        "$(IFS=';'; echo "${FAILED[*]}")" "$OUT" "$WALL" >&2
    exit 1
fi
printf 'manycore: passed: %s: %s; %s/%s (%d s in all)\n' "$WHAT" "$SUMMARY" "$OUT" manycore_report.md "$WALL"
