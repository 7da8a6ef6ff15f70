#!/usr/bin/env bash
# Stops a control plane started by start.sh and removes its state directory.
#   stop.sh DIR [--keep]     (--keep: leave DIR, e.g. to read the logs)
# Each component runs in its own process group: it gets SIGTERM, then SIGKILL after 15 s.
set -uo pipefail

dir=${1:-}
keep=${2:-}
if [[ -z "$dir" ]]; then
  echo "usage: stop.sh DIR [--keep]" >&2
  exit 2
fi
if [[ ! -d "$dir" ]]; then
  exit 0
fi
if [[ ! -f "$dir/etcd.pid" && ! -d "$dir/pki" ]]; then
  echo "stop.sh: $dir is not a control-plane directory (no etcd.pid, no pki/); leaving it alone" >&2
  exit 1
fi

stop_group() { # pid-file
  local pid
  pid=$(cat "$1" 2>/dev/null) || return 0
  [[ "$pid" =~ ^[0-9]+$ ]] || return 0
  kill -TERM -- "-$pid" 2>/dev/null || return 0
  local i
  for ((i = 0; i < 150; i++)); do
    kill -0 -- "-$pid" 2>/dev/null || return 0
    sleep 0.1
  done
  kill -KILL -- "-$pid" 2>/dev/null || true
}

for name in kube-scheduler kube-apiserver etcd; do
  [[ -f "$dir/$name.pid" ]] && stop_group "$dir/$name.pid"
done

watchdog=$(cat "$dir/watchdog.pid" 2>/dev/null || true)
if [[ "$keep" != "--keep" ]]; then
  rm -rf "$dir"
fi
# Last: the watchdog may be the process running this script.
if [[ "$watchdog" =~ ^[0-9]+$ ]]; then
  kill -TERM -- "-$watchdog" 2>/dev/null || true
fi
exit 0
