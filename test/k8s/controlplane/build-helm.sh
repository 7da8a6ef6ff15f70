#!/usr/bin/env bash
# Builds helm (pinned below) from the Go module proxy into the same cache as the control plane
# (${QM_K8S_CACHE:-$HOME/.cache/quartermaster/k8s-<version>}/bin/helm). Idempotent. Prints the binary's path.
set -euo pipefail

helm_version=v3.22.0
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
k8s_version=$(awk '$1 == "k8s.io/kubernetes" && $2 ~ /^v/ { print $2; exit }' "$here/go.mod")
cache=${QM_K8S_CACHE:-$HOME/.cache/quartermaster/k8s-$k8s_version}
bin=$cache/bin
mkdir -p "$bin"
exec 9>"$cache/.build-helm.lock"
flock 9
if [[ -x "$bin/helm" && "$(cat "$bin/.helm-version" 2>/dev/null)" == "$helm_version" ]]; then
  echo "$bin/helm"
  exit 0
fi
out=$(mktemp -d "$cache/.helm.XXXXXX")
trap 'rm -rf "$out"' EXIT
echo "build-helm.sh: building helm $helm_version into $bin (a few minutes the first time)" >&2
start=$(date +%s)
GOTOOLCHAIN=local CGO_ENABLED=0 GOBIN="$out" go install -trimpath \
  -ldflags "-s -w -X helm.sh/helm/v3/internal/version.version=$helm_version" "helm.sh/helm/v3/cmd/helm@$helm_version"
mv -f "$out/helm" "$bin/helm"
echo "$helm_version" >"$bin/.helm-version"
echo "build-helm.sh: built in $(($(date +%s) - start))s" >&2
echo "$bin/helm"
