#!/usr/bin/env bash
# Builds upstream workload controllers from the Go modules pinned in this directory (one wrapper module per
# controller: NAME/go.mod, NAME/go.sum) into ${QM_CONTROLLERS_CACHE:-$HOME/.cache/quartermaster/controllers}/NAME,
# with the manifests the tests apply (CRDs, webhook kustomizations, samples) copied from the same module
# version into NAME/manifests. Idempotent and parallel-safe: one flock per controller; nothing is done when
# the binary was built from the same go.mod/go.sum/build.sh (stamp file).
#
#   build.sh NAME...     NAME: kube-controller-manager | jobset | lws | kuberay | trainer | all
#
# Prints, per NAME and in order, one line "NAME DIR" (DIR/bin/NAME is the binary, DIR/manifests the files).
# Needs Go and the Go module proxy; the first build of each takes a few minutes on 2 cores.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache_root=${QM_CONTROLLERS_CACHE:-$HOME/.cache/quartermaster/controllers}
all=(kube-controller-manager jobset lws kuberay trainer)

# NAME -> "module package" (the package is the main package built; the binary is renamed to NAME).
spec() {
  case "$1" in
    kube-controller-manager) echo "k8s.io/kubernetes k8s.io/kubernetes/cmd/kube-controller-manager" ;;
    jobset) echo "sigs.k8s.io/jobset sigs.k8s.io/jobset" ;;
    lws) echo "sigs.k8s.io/lws sigs.k8s.io/lws/cmd" ;;
    kuberay) echo "github.com/ray-project/kuberay/ray-operator github.com/ray-project/kuberay/ray-operator" ;;
    trainer) echo "github.com/kubeflow/trainer/v2 github.com/kubeflow/trainer/v2/cmd/trainer-controller-manager" ;;
    *) return 1 ;;
  esac
}

# NAME -> module-relative paths copied into manifests/ (directories copied whole).
manifests() {
  case "$1" in
    kube-controller-manager) ;;
    jobset) echo "config/components/crd/bases config/components/webhook" ;;
    lws) echo "config/crd/bases config/webhook config/samples" ;;
    kuberay) echo "config/crd/bases config/samples" ;;
    trainer) echo "manifests/base/crds manifests/base/runtimes" ;;
  esac
}

build_one() {
  local name=$1 module pkg dir stamp version out ldflags start
  read -r module pkg < <(spec "$name")
  dir=$cache_root/$name
  stamp=$(cat "$here/$name/go.mod" "$here/$name/go.sum" "$here/build.sh" | sha256sum | cut -d' ' -f1)
  mkdir -p "$dir"
  exec 8>"$dir/.build.lock"
  flock 8
  if [[ -x "$dir/bin/$name" && -f "$dir/.stamp" && "$(cat "$dir/.stamp")" == "$stamp" ]]; then
    exec 8>&-
    echo "$name $dir"
    return 0
  fi
  if ! command -v go >/dev/null 2>&1; then
    echo "controllers/build.sh: go is not on PATH; it is needed to build $name" >&2
    exit 1
  fi
  out=$(mktemp -d "$dir/.build.XXXXXX")
  # shellcheck disable=SC2064
  trap "rm -rf '$out'" EXIT
  version=$(cd "$here/$name" && GOTOOLCHAIN=local GOFLAGS=-mod=readonly go list -m -f '{{.Version}}' "$module")
  ldflags="-s -w"
  if [[ $name == kube-controller-manager ]]; then
    local minor=${version#v1.}
    minor=${minor%%.*}
    for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
      ldflags+=" -X $p.gitVersion=$version -X $p.gitMajor=1 -X $p.gitMinor=$minor"
      ldflags+=" -X $p.gitTreeState=clean -X $p.buildDate=1970-01-01T00:00:00Z"
    done
  fi
  echo "controllers/build.sh: building $name ($module $version) into $dir (a few minutes the first time)" >&2
  start=$(date +%s)
  (
    cd "$here/$name"
    GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-mod=readonly go build -trimpath -ldflags "$ldflags" \
      -o "$out/$name" "$pkg"
    src=$(GOTOOLCHAIN=local GOFLAGS=-mod=readonly go list -m -f '{{.Dir}}' "$module")
    mkdir -p "$out/manifests"
    for path in $(manifests "$name"); do
      mkdir -p "$out/manifests/$(dirname "$path")"
      cp -R "$src/$path" "$out/manifests/$path"
    done
    chmod -R u+w "$out/manifests"
  )
  rm -rf "$dir/bin" "$dir/manifests"
  mkdir -p "$dir/bin"
  mv "$out/$name" "$dir/bin/$name"
  mv "$out/manifests" "$dir/manifests"
  echo "$version" >"$dir/.version"
  echo "$stamp" >"$dir/.stamp"
  rm -rf "$out"
  trap - EXIT
  echo "controllers/build.sh: built $name in $(($(date +%s) - start))s" >&2
  exec 8>&-
  echo "$name $dir"
}

names=("$@")
if [[ ${#names[@]} -eq 0 ]]; then
  echo "usage: build.sh NAME... (${all[*]} | all)" >&2
  exit 2
fi
if [[ ${names[0]} == all ]]; then names=("${all[@]}"); fi
for name in "${names[@]}"; do
  if ! spec "$name" >/dev/null; then
    echo "controllers/build.sh: unknown controller '$name' (known: ${all[*]})" >&2
    exit 2
  fi
done
for name in "${names[@]}"; do build_one "$name"; done
