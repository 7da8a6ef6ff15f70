#!/bin/sh
# Entry point of the Quartermaster image: the first argument picks the process.
set -eu
role=${1:-api}
[ $# -gt 0 ] && shift
case "$role" in
  api) exec node /app/dist/apps/api/src/main.js "$@" ;;
  scheduler) exec node /app/dist/apps/scheduler/src/main.js "$@" ;;
  worker) exec node /app/dist/apps/scheduler/src/main-worker.js "$@" ;;
  *)
    echo "quartermaster: unknown role '$role' (expected api, scheduler or worker)" >&2
    exit 64
    ;;
esac
