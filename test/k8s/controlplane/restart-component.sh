#!/usr/bin/env bash
# Kills one component of a control plane started by start.sh and starts it again with the same command
# line (for tests of what clients do when the API server goes away and comes back).
#   restart-component.sh DIR kube-apiserver|etcd|kube-scheduler [--down-seconds N]
set -euo pipefail
dir=${1:?usage: restart-component.sh DIR NAME [--down-seconds N]}
name=${2:?usage: restart-component.sh DIR NAME [--down-seconds N]}
down=0
if [[ "${3:-}" == "--down-seconds" ]]; then down=${4:?}; fi
[[ -f "$dir/$name.cmd" && -f "$dir/$name.pid" ]] || { echo "restart-component.sh: no $name in $dir" >&2; exit 2; }

pid=$(cat "$dir/$name.pid")
kill -KILL -- "-$pid" 2>/dev/null || true
while kill -0 -- "-$pid" 2>/dev/null; do sleep 0.1; done
sleep "$down"

cmd=$(cat "$dir/$name.cmd")
[[ -d "$dir" ]] || { echo "restart-component.sh: $dir was removed (stopped) meanwhile" >&2; exit 1; }
# exec: the background subshell becomes setsid, then the component, so $! is its pid and its group.
eval "exec setsid $cmd" >>"$dir/$name.log" 2>&1 </dev/null &
new_pid=$!
echo "$new_pid" >"$dir/$name.pid"
# If the control plane is stopped while we wait, do not leave the new process behind.
abandon() {
  kill -KILL -- "-$new_pid" 2>/dev/null || true
  echo "restart-component.sh: $*" >&2
  exit 1
}

if [[ "$name" == "kube-apiserver" ]]; then
  server=$(awk '/server:/ { print $2; exit }' "$dir/kubeconfig")
  for _ in $(seq 1 600); do
    [[ -d "$dir" ]] || abandon "$dir was removed (stopped) while $name restarted"
    if curl -fsS --cacert "$dir/pki/ca.crt" -H "Authorization: Bearer $(cat "$dir/pki/admin.token")" "$server/readyz" >/dev/null 2>&1; then
      exit 0
    fi
    kill -0 "$new_pid" 2>/dev/null || { tail -n 20 "$dir/$name.log" >&2; abandon "$name exited"; }
    sleep 0.1
  done
  abandon "$name not ready after 60 s"
fi
