#!/usr/bin/env bash
# Builds etcd, kube-apiserver and kube-scheduler from the Go modules pinned in go.mod (next to this script)
# into ${QM_K8S_CACHE:-$HOME/.cache/quartermaster/k8s-<version>}/bin. Idempotent: does nothing when the
# binaries are there and were built from the same go.mod/go.sum. Prints the bin directory on stdout.
# Needs Go (>= go.mod's go line) and the Go module proxy; the first build takes several minutes.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
k8s_version=$(awk '$1 == "k8s.io/kubernetes" && $2 ~ /^v/ { print $2; exit }' "$here/go.mod")
if [[ -z "$k8s_version" ]]; then
  echo "build.sh: cannot find the k8s.io/kubernetes version in $here/go.mod" >&2
  exit 1
fi
cache=${QM_K8S_CACHE:-$HOME/.cache/quartermaster/k8s-$k8s_version}
bin=$cache/bin
stamp=$(cat "$here/go.mod" "$here/go.sum" | sha256sum | cut -d' ' -f1)
binaries=(etcd kube-apiserver kube-scheduler)

is_built() {
  [[ -f "$bin/.stamp" && "$(cat "$bin/.stamp")" == "$stamp" ]] || return 1
  local b
  for b in "${binaries[@]}"; do [[ -x "$bin/$b" ]] || return 1; done
}

mkdir -p "$bin"
# One build at a time per cache (parallel test runs, CI and a developer may all ask at once).
exec 9>"$cache/.build.lock"
flock 9
if is_built; then
  echo "$bin"
  exit 0
fi

if ! command -v go >/dev/null 2>&1; then
  echo "build.sh: go is not on PATH; it is needed to build the Kubernetes control plane" >&2
  exit 1
fi

minor=${k8s_version#v1.}
minor=${minor%%.*}
ldflags="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ldflags+=" -X $pkg.gitVersion=$k8s_version -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor"
  ldflags+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
done

out=$(mktemp -d "$cache/.build.XXXXXX")
trap 'rm -rf "$out"' EXIT
echo "build.sh: building etcd, kube-apiserver, kube-scheduler ($k8s_version) into $bin (slow the first time)" >&2
start=$(date +%s)
(
  cd "$here"
  GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-mod=readonly go build -trimpath -ldflags "$ldflags" -o "$out/" \
    k8s.io/kubernetes/cmd/kube-apiserver \
    k8s.io/kubernetes/cmd/kube-scheduler \
    go.etcd.io/etcd/server/v3
)
# go names the etcd main package after its path without the /v3 suffix.
if [[ -x "$out/server" ]]; then mv "$out/server" "$out/etcd"; fi
for b in "${binaries[@]}"; do
  if [[ ! -x "$out/$b" ]]; then
    echo "build.sh: go build produced no $b (got: $(ls "$out"))" >&2
    exit 1
  fi
  mv -f "$out/$b" "$bin/$b"
done
echo "$stamp" >"$bin/.stamp"
echo "build.sh: built in $(($(date +%s) - start))s" >&2
echo "$bin"
