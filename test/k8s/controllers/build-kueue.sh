#!/usr/bin/env bash
# Builds Kueue (sigs.k8s.io/kueue/cmd/kueue, the version pinned in kueue/go.mod next to this script) into
# ${QM_CONTROLLERS_CACHE:-$HOME/.cache/quartermaster/controllers}/kueue, with its CRDs and webhook kustomization
# copied from the same module version into kueue/manifests — the same layout and pattern as build.sh (one
# flock, a stamp of go.mod/go.sum/this script; nothing is done when the binary is up to date).
#
# Benchmark only: `npm run bench:k8s:kueue` uses it; no test, no CI job and not build.sh's `all` builds Kueue.
# Kueue pins k8s.io/* v0.35 and controller-runtime v0.23, hence its own wrapper module.
#
#   build-kueue.sh        prints one line "kueue DIR" (DIR/bin/kueue is the binary, DIR/manifests the files)
#
# Needs Go and the Go module proxy; the first build takes ~5-10 min on 2 cores.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache_root=${QM_CONTROLLERS_CACHE:-$HOME/.cache/quartermaster/controllers}
name=kueue
module=sigs.k8s.io/kueue
pkg=sigs.k8s.io/kueue/cmd/kueue
paths=(config/components/crd/bases config/components/webhook)

dir=$cache_root/$name
stamp=$(cat "$here/$name/go.mod" "$here/$name/go.sum" "$here/build-kueue.sh" | sha256sum | cut -d' ' -f1)
mkdir -p "$dir"
exec 8>"$dir/.build.lock"
flock 8
if [[ -x "$dir/bin/$name" && -f "$dir/.stamp" && "$(cat "$dir/.stamp")" == "$stamp" ]]; then
  echo "$name $dir"
  exit 0
fi
if ! command -v go >/dev/null 2>&1; then
  echo "controllers/build-kueue.sh: go is not on PATH; it is needed to build Kueue" >&2
  exit 1
fi
out=$(mktemp -d "$dir/.build.XXXXXX")
trap 'rm -rf "$out"' EXIT
version=$(cd "$here/$name" && GOTOOLCHAIN=local GOFLAGS=-mod=readonly go list -m -f '{{.Version}}' "$module")
echo "controllers/build-kueue.sh: building $name ($module $version) into $dir (several minutes the first time)" >&2
start=$(date +%s)
(
  cd "$here/$name"
  GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-mod=readonly go build -trimpath -ldflags "-s -w" -o "$out/$name" "$pkg"
  src=$(GOTOOLCHAIN=local GOFLAGS=-mod=readonly go list -m -f '{{.Dir}}' "$module")
  mkdir -p "$out/manifests"
  for path in "${paths[@]}"; do
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
echo "controllers/build-kueue.sh: built $name in $(($(date +%s) - start))s" >&2
echo "$name $dir"
