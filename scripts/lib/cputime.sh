# shellcheck shell=bash
# Sourced by the scripts that weigh a client's CPU: user+system CPU of one
# process from the kernel's accounting (/usr/bin/time), not a sampler's.

# cpu_timed OUT CMD...: runs CMD (under CLIENT_ON, lib/cpus.sh, when the
# caller pinned it) with its output in OUT, and prints the user+system CPU
# seconds it took. A CMD that fails still prints what it used.
cpu_timed() {
  local out=$1; shift
  /usr/bin/time -f 'CPU %U %S' -o "$out.time" "${CLIENT_ON[@]}" "$@" >"$out" 2>&1 || true
  awk '/^CPU/ {print $2 + $3}' "$out.time"
}
