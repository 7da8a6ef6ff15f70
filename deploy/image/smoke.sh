#!/usr/bin/env bash
# Smoke test of the Quartermaster image (built by deploy/image/build-offline.sh) against this host's
# Postgres and Redis. Exits non-zero on the first failed check, printing the containers' logs.
#
#   sudo deploy/image/smoke.sh                    # QM_IMAGE=quartermaster:dev by default
#
# Checks: the image runs as `node` (uid 1000); an unknown role exits 64 with its message; api, scheduler
# and worker containers start (each migrates its database at start) and their /readyz, /healthz and
# /metrics answer 200 (api /docs/openapi.json too); over REST a flavor, team, quota, node and job are
# created; the scheduler container admits the job; the worker container acknowledges the bind (outbox
# entry done, qm_side_effects_total); each container stops on SIGTERM with exit code 0.
# Own resources: a fresh database (dropped at exit), a unique Redis key prefix (deleted at exit), free
# ports, containers named after the run (removed at exit).
#
# Podman here: vfs storage (as build-offline.sh), runc with cgroupfs (crun refuses this host's hybrid
# cgroup v1/v2 layout), host network, and rlimits no higher than this host's hard limits (no
# CAP_SYS_RESOURCE here, so podman's defaults — nofile 1048576 — fail with "setrlimit: Operation not permitted").
set -euo pipefail

IMAGE=${QM_IMAGE:-quartermaster:dev}
PG=${QM_SMOKE_PG:-postgresql://postgres@127.0.0.1:5432}
REDIS_URL=${QM_SMOKE_REDIS_URL:-redis://127.0.0.1:6379}
TIMEOUT=${QM_SMOKE_TIMEOUT_S:-120}
RUN=qm-smoke-$(date +%s)-$$
DB=${RUN//-/_}
TOKEN=smoke-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')
PODMAN=(podman --storage-driver vfs --runtime runc --cgroup-manager cgroupfs)
nofile=$(ulimit -Hn)
[ "$nofile" = unlimited ] && nofile=1048576
RUN_OPTS=(--network host --ulimit "nofile=$nofile:$nofile" --ulimit nproc=4096:4096)
CONTAINERS=()

log() { printf 'smoke: %s\n' "$*" >&2; }
dump_logs() {
  for c in "${CONTAINERS[@]}"; do
    log "── logs of $c (last 40 lines) ──"
    "${PODMAN[@]}" logs "$c" 2>&1 | tail -n 40 >&2 || true
  done
}
fail() {
  log "FAIL: $*"
  dump_logs
  exit 1
}
pass() { log "ok   $*"; }

cleanup() {
  local rc=$?
  for c in "${CONTAINERS[@]}"; do "${PODMAN[@]}" rm -f -t 5 "$c" >/dev/null 2>&1 || true; done
  psql -q "$PG/postgres" -c "DROP DATABASE IF EXISTS \"$DB\" WITH (FORCE)" >/dev/null 2>&1 || log "could not drop database $DB"
  redis-cli -u "$REDIS_URL" --scan --pattern "$RUN:*" 2>/dev/null | xargs -r redis-cli -u "$REDIS_URL" del >/dev/null 2>&1 || true
  exit "$rc"
}
trap cleanup EXIT

for cmd in podman runc psql redis-cli curl python3; do
  command -v "$cmd" >/dev/null || fail "$cmd is not installed"
done
"${PODMAN[@]}" image exists "$IMAGE" || fail "no image $IMAGE in vfs storage: run deploy/image/build-offline.sh first"
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
API_PORT=$(free_port)
SCHED_PORT=$(free_port)
WORKER_PORT=$(free_port)
log "run $RUN: image $IMAGE, database $DB, redis prefix $RUN, ports api $API_PORT scheduler $SCHED_PORT worker $WORKER_PORT"

# ── the image ────────────────────────────────────────────────────────────────────────────────────────
size=$("${PODMAN[@]}" image inspect --format '{{.Size}}' "$IMAGE")
log "image size: $((size / 1000000)) MB uncompressed"
user=$("${PODMAN[@]}" image inspect --format '{{.Config.User}}' "$IMAGE")
[ "$user" = node ] || fail "image user is '$user', expected node"
pass "image config: USER node"

set +e
unknown_err=$("${PODMAN[@]}" run --rm "${RUN_OPTS[@]}" --name "$RUN-unknown" "$IMAGE" bogus-role 2>&1 >/dev/null)
unknown_rc=$?
set -e
[ "$unknown_rc" = 64 ] || fail "unknown role exited $unknown_rc, expected 64 (stderr: $unknown_err)"
case "$unknown_err" in
  *"unknown role 'bogus-role' (expected api, scheduler or worker)"*) ;;
  *) fail "unknown role printed: $unknown_err" ;;
esac
pass "unknown role exits 64: $unknown_err"

# ── three processes ──────────────────────────────────────────────────────────────────────────────────
psql -q -v ON_ERROR_STOP=1 "$PG/postgres" -c "CREATE DATABASE \"$DB\"" || fail "cannot create database $DB at $PG"
ENV=(-e "DATABASE_URL=$PG/$DB" -e "REDIS_URL=$REDIS_URL" -e "QM_ADMIN_TOKEN=$TOKEN" -e "QM_REDIS_PREFIX=$RUN"
  -e "PORT=$API_PORT" -e "QM_SCHEDULER_PORT=$SCHED_PORT" -e "QM_WORKER_PORT=$WORKER_PORT" -e LOG_LEVEL=info)

start_role() { # role → container name; prints seconds from `podman run` to /readyz 200 and from process start
  local role=$1 port=$2 name="$RUN-$1" t0 t_ready started code
  CONTAINERS+=("$name")
  t0=$(date +%s.%N)
  "${PODMAN[@]}" run -d "${RUN_OPTS[@]}" --name "$name" "${ENV[@]}" "$IMAGE" "$role" >/dev/null || fail "podman run $role failed"
  for _ in $(seq "$((TIMEOUT * 5))"); do
    code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/readyz" || true)
    [ "$code" = 200 ] && break
    [ "$("${PODMAN[@]}" inspect --format '{{.State.Running}}' "$name")" = true ] || fail "$role container exited: $("${PODMAN[@]}" inspect --format '{{.State.ExitCode}}' "$name")"
    sleep 0.2
  done
  [ "$code" = 200 ] || fail "$role /readyz answered $code after ${TIMEOUT}s"
  t_ready=$(date +%s.%N)
  started=$("${PODMAN[@]}" inspect --format '{{.State.StartedAt.Unix}}.{{printf "%09d" .State.StartedAt.Nanosecond}}' "$name")
  pass "$role /readyz 200: $(python3 -c "print(f'{$t_ready-$t0:.1f} s after podman run, {$t_ready-$started:.1f} s after the process started')")"
}
start_role api "$API_PORT"
start_role scheduler "$SCHED_PORT"
start_role worker "$WORKER_PORT"

for name in "$RUN-api" "$RUN-scheduler" "$RUN-worker"; do
  status=$("${PODMAN[@]}" exec "$name" cat /proc/1/status) || fail "cannot read /proc/1/status in $name"
  uid_line=$(printf '%s\n' "$status" | grep '^Uid:' | tr -s '\t ' ' ')
  [ "$uid_line" = "Uid: 1000 1000 1000 1000" ] || fail "$name: process 1 is not uid 1000 ($uid_line)"
  cmd=$("${PODMAN[@]}" exec "$name" cat /proc/1/cmdline | tr '\0' ' ')
  case "$cmd" in node\ /app/dist/*) ;; *) fail "$name: process 1 is '$cmd', expected node /app/dist/…" ;; esac
done
pass "process 1 of each container is node running as uid 1000 (user node)"

# ── REST: tenancy, capacity, a job ───────────────────────────────────────────────────────────────────
Q=http://127.0.0.1:$API_PORT
AUTH="Authorization: Bearer $TOKEN"
code=$(curl -s -o /dev/null -w '%{http_code}' "$Q/healthz")
[ "$code" = 200 ] || fail "api /healthz answered $code"
for url in "http://127.0.0.1:$SCHED_PORT/healthz" "http://127.0.0.1:$WORKER_PORT/healthz" "$Q/docs/openapi.json" \
  "$Q/metrics" "http://127.0.0.1:$SCHED_PORT/metrics" "http://127.0.0.1:$WORKER_PORT/metrics"; do
  code=$(curl -s -o /dev/null -w '%{http_code}' "$url")
  [ "$code" = 200 ] || fail "$url answered $code"
done
pass "/healthz of api, scheduler and worker 200; api /docs/openapi.json 200; /metrics of each 200"
call() { # method path expected-status [body] → body on stdout
  local out code
  out=$(curl -s -w '\n%{http_code}' -X "$1" "$Q$2" -H "$AUTH" -H 'Content-Type: application/json' ${4:+-d "$4"})
  code=${out##*$'\n'}
  [ "$code" = "$3" ] || fail "$1 $2 answered $code, expected $3: ${out%$'\n'*}"
  printf '%s' "${out%$'\n'*}"
}
call PUT /v1/flavors/h100-80gb 201 '{"kind":"nvidia-gpu","memoryGiB":80,"relativeSpeed":2,"costPerHour":4}' >/dev/null
call PUT /v1/teams/vision 201 '{"fairShareWeight":1}' >/dev/null
call PUT /v1/teams/vision/quotas/h100-80gb 201 '{"nominal":16,"borrowingLimit":null,"lendingLimit":null}' >/dev/null
call PUT /v1/nodes/gpu-1 201 '{"flavor":"h100-80gb","accelerators":8,"cpuMillis":96000,"memoryMiB":1048576,"topology":{"zone":"z1","block":"b1"}}' >/dev/null
job=$(call POST /v1/jobs 201 '{"name":"smoke","team":"vision","replicas":1,"acceleratorsPerReplica":8,"flavors":["h100-80gb"],"template":{"image":"example/none","command":["true"]}}')
id=$(printf '%s' "$job" | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
pass "REST: flavor, team, quota, node created; job $id submitted"

state=
for _ in $(seq "$((TIMEOUT * 5))"); do
  state=$(call GET "/v1/jobs/$id" 200 | python3 -c 'import json,sys; j=json.load(sys.stdin); print(j["state"], j["flavor"])')
  [ "${state%% *}" = PENDING ] || break
  sleep 0.2
done
[ "$state" = "ADMITTED h100-80gb" ] || fail "job $id is '$state', expected ADMITTED on h100-80gb"
call GET "/v1/jobs/$id/events" 200 | grep -q '"kind":"job.admitted","actor":"scheduler"' || fail "job $id has no job.admitted event by the scheduler"
pass "the scheduler container admitted the job on h100-80gb"

done_rows=
for _ in $(seq "$((TIMEOUT * 5))"); do
  done_rows=$(psql -qtA "$PG/$DB" -c "SELECT count(*) FROM outbox WHERE kind = 'bind' AND status = 'done'")
  [ "$done_rows" -ge 1 ] && break
  sleep 0.2
done
[ "$done_rows" -ge 1 ] || fail "no bind outbox entry done: $(psql -qtA "$PG/$DB" -c 'SELECT kind, status, attempts, last_error FROM outbox')"
metric=$(curl -s "http://127.0.0.1:$WORKER_PORT/metrics" | grep '^qm_side_effects_total{kind="bind",outcome="done"}' || true)
[ -n "$metric" ] || fail "worker /metrics has no qm_side_effects_total{kind=\"bind\",outcome=\"done\"}"
pass "the worker container acknowledged the bind ($metric)"

for name in "$RUN-api" "$RUN-scheduler" "$RUN-worker"; do
  t0=$(date +%s.%N)
  "${PODMAN[@]}" stop -t 20 "$name" >/dev/null || fail "podman stop $name failed"
  code=$("${PODMAN[@]}" inspect --format '{{.State.ExitCode}}' "$name")
  [ "$code" = 0 ] || fail "$name exited $code after SIGTERM, expected 0 (137 = killed after the stop timeout)"
  log "ok   $name stopped on SIGTERM with exit code 0 in $(python3 -c "print(f'{$(date +%s.%N)-$t0:.1f}')") s"
done

log "PASS (image $IMAGE, $((size / 1000000)) MB)"
