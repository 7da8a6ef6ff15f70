#!/usr/bin/env bash
# Starts a real Kubernetes control plane on 127.0.0.1 for tests: etcd + kube-apiserver (+ kube-scheduler on
# request), built from source by build.sh when missing. No Docker, no kubelet: Node objects are created by
# the tests themselves (the ServiceAccount and TaintNodesByCondition admission plugins are off for that).
#
#   start.sh [--dir DIR] [--scheduler] [--scheduler-config FILE] [--watch-pid PID]
#
#   --dir DIR                 state directory (created; default: a new temp dir). Holds certificates,
#                             etcd data, logs, pids, `kubeconfig` and `env`.
#   --scheduler               also start kube-scheduler (default profile, no leader election).
#   --scheduler-config FILE   start kube-scheduler with this KubeSchedulerConfiguration. If it has no
#                             top-level `clientConnection`, one pointing at DIR/kubeconfig is appended.
#   --watch-pid PID           stop everything (stop.sh DIR) when process PID exits (test runner crashed).
#
# Prints DIR as the last line on stdout. `source DIR/env` sets KUBECONFIG. Stop with `stop.sh DIR`.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
dir=""
scheduler=0
scheduler_config=""
watch_pid=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --dir) dir=$2; shift 2 ;;
    --scheduler) scheduler=1; shift ;;
    --scheduler-config) scheduler=1; scheduler_config=$2; shift 2 ;;
    --watch-pid) watch_pid=$2; shift 2 ;;
    *) echo "start.sh: unknown argument: $1" >&2; exit 2 ;;
  esac
done
if [[ -n "$scheduler_config" && ! -f "$scheduler_config" ]]; then
  echo "start.sh: --scheduler-config: no such file: $scheduler_config" >&2
  exit 2
fi

bin=$("$here/build.sh" | tail -n 1)
if [[ -z "$dir" ]]; then dir=$(mktemp -d "${TMPDIR:-/tmp}/qm-k8s.XXXXXX"); else mkdir -p "$dir"; fi
dir=$(cd "$dir" && pwd)

fail() {
  echo "start.sh: $*" >&2
  local log
  for log in "$dir"/*.log; do
    [[ -f "$log" ]] || continue
    echo "----- last lines of $log -----" >&2
    tail -n 30 "$log" >&2
  done
  "$here/stop.sh" "$dir" >&2 || true
  exit 1
}

# Free ports on 127.0.0.1, asked from the kernel (bind to 0) and released just before use.
read -r etcd_port etcd_peer_port api_port scheduler_port < <(node -e '
  const net = require("node:net");
  const servers = [0, 1, 2, 3].map(() => net.createServer());
  Promise.all(servers.map((s) => new Promise((r) => s.listen(0, "127.0.0.1", () => r(s.address().port)))))
    .then((ports) => { console.log(ports.join(" ")); servers.forEach((s) => s.close()); });
')

# --- certificates: a CA, the serving certificate, the service-account signing key, an admin token ----
pki=$dir/pki
mkdir -p "$pki"
(
  cd "$pki"
  openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 3650 \
    -subj "/CN=quartermaster-test-ca" 2>/dev/null
  openssl req -newkey rsa:2048 -nodes -keyout apiserver.key -out apiserver.csr \
    -subj "/CN=kube-apiserver" 2>/dev/null
  printf '%s\n' \
    "subjectAltName=IP:127.0.0.1,IP:10.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local" \
    "basicConstraints=CA:FALSE" "keyUsage=digitalSignature,keyEncipherment" "extendedKeyUsage=serverAuth" >apiserver.ext
  openssl x509 -req -in apiserver.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out apiserver.crt \
    -days 3650 -extfile apiserver.ext 2>/dev/null
  openssl genrsa -out sa.key 2048 2>/dev/null
  openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
  token=$(openssl rand -hex 24)
  echo "$token,admin,admin-uid,system:masters" >tokens.csv
  echo "$token" >admin.token
) || fail "certificate generation with openssl failed"
token=$(cat "$pki/admin.token")

start_component() { # name, command... ; own process group (pgid = pid), output to DIR/name.log
  local name=$1
  shift
  setsid "$@" >>"$dir/$name.log" 2>&1 </dev/null &
  echo $! >"$dir/$name.pid"
  printf '%q ' "$@" >"$dir/$name.cmd" # for restart-component.sh
}

alive() { kill -0 "$(cat "$dir/$1.pid")" 2>/dev/null; }

wait_for() { # name, seconds, command...
  local name=$1 seconds=$2 deadline
  shift 2
  deadline=$(($(date +%s) + seconds))
  until "$@" >/dev/null 2>&1; do
    alive "$name" || fail "$name exited during startup"
    (($(date +%s) < deadline)) || fail "$name not ready after ${seconds}s"
    sleep 0.5
  done
}

# --- etcd ---------------------------------------------------------------------------------------------
start_component etcd "$bin/etcd" \
  --name qm --data-dir "$dir/etcd-data" \
  --listen-client-urls "http://127.0.0.1:$etcd_port" --advertise-client-urls "http://127.0.0.1:$etcd_port" \
  --listen-peer-urls "http://127.0.0.1:$etcd_peer_port" \
  --initial-advertise-peer-urls "http://127.0.0.1:$etcd_peer_port" \
  --initial-cluster "qm=http://127.0.0.1:$etcd_peer_port" \
  --unsafe-no-fsync --log-level warn
wait_for etcd 60 curl -fsS "http://127.0.0.1:$etcd_port/health"

# --- kube-apiserver -----------------------------------------------------------------------------------
start_component kube-apiserver "$bin/kube-apiserver" \
  --etcd-servers "http://127.0.0.1:$etcd_port" \
  --bind-address 127.0.0.1 --advertise-address 127.0.0.1 --secure-port "$api_port" \
  --tls-cert-file "$pki/apiserver.crt" --tls-private-key-file "$pki/apiserver.key" \
  --client-ca-file "$pki/ca.crt" --token-auth-file "$pki/tokens.csv" \
  --authorization-mode RBAC \
  --service-account-issuer https://kubernetes.default.svc.cluster.local \
  --service-account-key-file "$pki/sa.pub" --service-account-signing-key-file "$pki/sa.key" \
  --service-cluster-ip-range 10.0.0.0/24 \
  --disable-admission-plugins ServiceAccount,TaintNodesByCondition \
  --endpoint-reconciler-type none \
  --profiling=false --v 1
server="https://127.0.0.1:$api_port"
wait_for kube-apiserver 180 curl -fsS --cacert "$pki/ca.crt" -H "Authorization: Bearer $token" "$server/readyz"
# The `default` namespace is created by a post-start controller; tests and kube-scheduler expect it.
wait_for kube-apiserver 60 curl -fsS --cacert "$pki/ca.crt" -H "Authorization: Bearer $token" \
  "$server/api/v1/namespaces/default"

cat >"$dir/kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
  - name: quartermaster-test
    cluster:
      server: $server
      certificate-authority-data: $(base64 -w0 <"$pki/ca.crt")
users:
  - name: admin
    user:
      token: $token
contexts:
  - name: quartermaster-test
    context:
      cluster: quartermaster-test
      user: admin
      namespace: default
current-context: quartermaster-test
EOF
chmod 600 "$dir/kubeconfig"

# --- kube-scheduler (optional) ------------------------------------------------------------------------
if ((scheduler)); then
  if [[ -n "$scheduler_config" ]]; then
    cp "$scheduler_config" "$dir/scheduler-config.yaml"
    if ! grep -q '^clientConnection:' "$dir/scheduler-config.yaml"; then
      printf '\nclientConnection:\n  kubeconfig: %s\n' "$dir/kubeconfig" >>"$dir/scheduler-config.yaml"
    fi
    scheduler_args=(--config "$dir/scheduler-config.yaml" --leader-elect=false)
  else
    scheduler_args=(--kubeconfig "$dir/kubeconfig" --leader-elect=false)
  fi
  start_component kube-scheduler "$bin/kube-scheduler" "${scheduler_args[@]}" \
    --authentication-kubeconfig "$dir/kubeconfig" --authorization-kubeconfig "$dir/kubeconfig" \
    --bind-address 127.0.0.1 --secure-port "$scheduler_port" --cert-dir "$dir/scheduler-certs" --v 1
  wait_for kube-scheduler 60 curl -fsSk "https://127.0.0.1:$scheduler_port/readyz"
fi

if [[ -n "$watch_pid" ]]; then
  setsid bash -c 'while kill -0 "$1" 2>/dev/null; do sleep 2; done; exec "$2" "$3"' \
    watchdog "$watch_pid" "$here/stop.sh" "$dir" >/dev/null 2>&1 </dev/null &
  echo $! >"$dir/watchdog.pid"
fi

printf 'export KUBECONFIG=%q\nexport QM_K8S_DIR=%q\n' "$dir/kubeconfig" "$dir" >"$dir/env"
echo "$dir"
