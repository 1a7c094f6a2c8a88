# shellcheck shell=bash
# Sourced by the comparison scripts: ports and processes.
#
# free_port: a TCP port on 127.0.0.1 nothing listens on now.
free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# wait_port PORT [PID [TRIES]]: waits until 127.0.0.1:PORT accepts (TRIES
# times 0.1 s, default 100); returns 1 early if PID is given and has exited,
# and 1 when the port never opens.
wait_port() {
  local port=$1 pid=${2:-} tries=${3:-100}
  for _ in $(seq "$tries"); do
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && return 0
    if [ -n "$pid" ] && ! kill -0 "$pid" 2>/dev/null; then return 1; fi
    sleep 0.1
  done
  return 1
}
