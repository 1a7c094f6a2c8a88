# shellcheck shell=bash
# Sourced by the comparison scripts: the arithmetic of their summaries.

# median [NONE]: the median of the numbers on stdin (any whitespace between
# them), the mean of the middle two when their count is even; NONE (default
# 0) when there are none.
median() {
  tr -s ' \t' '\n' | { grep -v '^$' || true; } | sort -g |
    awk -v none="${1:-0}" '{a[NR]=$1} END {if (!NR) print none; else print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'
}

# ratio A B [FORMAT]: A/B printed with FORMAT (default %.3f); 0 when B is
# not above 0, so a run that answered nothing does not divide by zero.
ratio() {
  awk -v a="$1" -v b="$2" -v f="${3:-%.3f}" 'BEGIN {printf f, (b > 0 ? a / b : 0)}'
}

# per_request SECONDS REQUESTS [FORMAT]: SECONDS of CPU over REQUESTS, in
# ns a request, printed with FORMAT (default %.0f); 0 for no requests.
per_request() {
  awk -v c="$1" -v n="$2" -v f="${3:-%.0f}" 'BEGIN {printf f, (n > 0 ? c * 1e9 / n : 0)}'
}

# rounds_line RATIOS: "r1 r2 ... -> median M" with each at %.3f, from a
# space-separated list of per-round ratios.
rounds_line() {
  local r out=""
  for r in $1; do out+="$(printf '%.3f' "$r") "; done
  echo "${out}-> median $(printf '%.3f' "$(echo "$1" | median)")"
}
