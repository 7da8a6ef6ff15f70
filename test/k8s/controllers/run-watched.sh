#!/usr/bin/env bash
# Runs a controller for the k8s tests and stops it when the test process that started it is gone (a crashed
# or killed Jest worker must not leave controllers behind, talking to a stopped apiserver).
#
#   run-watched.sh WATCH_PID -- COMMAND...
#
# SIGTERM/SIGINT to this script is passed to COMMAND; COMMAND is SIGKILLed 10 s after WATCH_PID exits
# without it having stopped on SIGTERM. Exits with COMMAND's status.
set -uo pipefail
watch_pid=$1
shift
[[ ${1:-} == -- ]] && shift
"$@" &
child=$!
stop() {
  kill -TERM "$child" 2>/dev/null
  for _ in $(seq 1 100); do kill -0 "$child" 2>/dev/null || break; sleep 0.1; done
  kill -KILL "$child" 2>/dev/null
}
trap 'stop; wait "$child"; exit $?' TERM INT
while kill -0 "$child" 2>/dev/null; do
  if ! kill -0 "$watch_pid" 2>/dev/null; then
    stop
    break
  fi
  sleep 1 &
  wait $! 2>/dev/null
done
wait "$child"
