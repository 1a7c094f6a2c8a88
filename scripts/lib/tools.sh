# shellcheck shell=bash
# Sourced by the scripts: is a tool installed, and how to get it when not.
# One place for the hints, so every script names the same package.

# tool_hint NAME: how to install NAME on Debian/Ubuntu ("" when unknown).
tool_hint() {
  case $1 in
    nginx) echo "apt-get install -y nginx-light" ;;
    wrk) echo "apt-get install -y wrk" ;;
    h2load) echo "apt-get install -y nghttp2-client" ;;
    /usr/bin/time) echo "apt-get install -y time" ;;
    openssl) echo "apt-get install -y openssl" ;;
    taskset) echo "apt-get install -y util-linux" ;;
    python3) echo "apt-get install -y python3" ;;
    git) echo "apt-get install -y git" ;;
    jq) echo "apt-get install -y jq" ;;
    curl) echo "apt-get install -y curl" ;;
    strace) echo "apt-get install -y strace" ;;
    valgrind | callgrind_control) echo "apt-get install -y valgrind" ;;
    go) echo "https://go.dev/dl" ;;
  esac
}

# have_tool NAME: whether NAME is installed (a command on PATH or an
# executable path); quiet, for tools a script can do without.
have_tool() {
  command -v "$1" >/dev/null 2>&1
}

# need_tool NAME [HINT]: returns when NAME is installed; otherwise prints
# "SCRIPT: NAME not found (HINT)" on stderr and exits 2. HINT defaults to
# tool_hint's.
need_tool() {
  have_tool "$1" && return 0
  local hint=${2:-$(tool_hint "$1")} script=${0##*/}
  echo "${script%.sh}: $1 not found${hint:+ ($hint)}" >&2
  exit 2
}

# need_tools NAME...: need_tool for each, with tool_hint's hints.
need_tools() {
  local tool
  for tool in "$@"; do need_tool "$tool"; done
}
