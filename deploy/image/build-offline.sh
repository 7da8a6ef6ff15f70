#!/usr/bin/env bash
# Builds deploy/Dockerfile UNCHANGED into an image (default quartermaster:dev) on a Debian bookworm machine
# that has no Docker engine and cannot reach any container registry (only Debian apt, the npm registry).
#
#   sudo deploy/image/build-offline.sh            # tools → stand-in base (cached) → buildah bud
#   QM_IMAGE=quartermaster:test deploy/image/build-offline.sh
#   QM_REBUILD_BASE=1 deploy/image/build-offline.sh   # rebuild the stand-in node:20-bookworm-slim
#
# 1. apt-get installs buildah, podman, runc, debootstrap, dpkg-repack (skipped when present).
# 2. The Dockerfile's base, node:20-bookworm-slim, cannot be pulled, so a stand-in is built once and
#    cached in container storage under that exact name: debootstrap --variant=minbase bookworm
#    + ca-certificates, node from this host's nodejs 20 package (dpkg-repack), npm from the npm registry
#    (the version Node 20.20 bundles), a `node` user 1000:1000 (/home/node), slim's dpkg path excludes.
#    See deploy/image/README.md for how it differs from the real image.
# 3. buildah bud --pull=never --isolation chroot -f deploy/Dockerfile -t $QM_IMAGE <repo root>.
#
# Storage: vfs under /var/lib/containers (pass --storage-driver vfs to podman/buildah to see the image).
# Downloads (the repacked node .deb, the npm tarball, debootstrap's .debs) are cached in $QM_IMAGE_CACHE.
set -euo pipefail

REPO=$(cd "$(dirname "$0")/../.." && pwd)
IMAGE=${QM_IMAGE:-quartermaster:dev}
BASE=docker.io/library/node:20-bookworm-slim
CACHE=${QM_IMAGE_CACHE:-/var/cache/quartermaster-image}
NPM_VERSION=${QM_BASE_NPM_VERSION:-10.8.2}
MIRROR=${QM_DEBIAN_MIRROR:-http://deb.debian.org/debian}
STANDIN_LABEL=io.quartermaster.standin-base
export STORAGE_DRIVER=vfs
BUILDAH=(buildah --storage-driver vfs)

log() { printf 'build-offline: %s\n' "$*" >&2; }
die() {
  log "ERROR: $*"
  exit 1
}

[ "$(id -u)" = 0 ] || die "run as root: apt-get, debootstrap, chroot and buildah's vfs storage need it"
[ -f "$REPO/deploy/Dockerfile" ] || die "no deploy/Dockerfile under $REPO"
[ -f "$REPO/.dockerignore" ] || die "no .dockerignore at the repository root: the build context would carry node_modules, dist and .git"

# ── 1. tools ────────────────────────────────────────────────────────────────────────────────────────
missing=()
# runc: podman's default runtime crun refuses this host's hybrid cgroup layout (deploy/image/smoke.sh runs podman with runc).
for pair in buildah:buildah podman:podman runc:runc debootstrap:debootstrap dpkg-repack:dpkg-repack; do
  command -v "${pair%%:*}" >/dev/null 2>&1 || missing+=("${pair#*:}")
done
if [ ${#missing[@]} -gt 0 ]; then
  log "installing ${missing[*]} (apt)"
  apt-get update -qq || die "apt-get update failed: Debian's apt mirror must be reachable"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null || die "apt-get install ${missing[*]} failed"
fi
log "tools: $(buildah --version | cut -d' ' -f1-3), $(podman --version)"

# ── 2. stand-in base image ──────────────────────────────────────────────────────────────────────────
base_is_standin() {
  [ "$("${BUILDAH[@]}" inspect --type image --format "{{index .ImageAnnotations \"$STANDIN_LABEL\"}}{{index .OCIv1.Config.Labels \"$STANDIN_LABEL\"}}" "$BASE" 2>/dev/null)" != "" ]
}
base_exists() { "${BUILDAH[@]}" inspect --type image "$BASE" >/dev/null 2>&1; }

build_base() {
  local node_version deb npm_tgz rootfs unpack ctr mnt started
  started=$(date +%s)
  node_version=$(dpkg-query -W -f '${Version}' nodejs 2>/dev/null) || die "this host has no nodejs package: the stand-in takes Node.js from it (dpkg-repack nodejs)"
  case "$node_version" in 20.*) ;; *) die "host nodejs is $node_version; the Dockerfile's base is Node 20" ;; esac
  mkdir -p "$CACHE/debs"
  deb=$(find "$CACHE" -maxdepth 1 -name "nodejs_${node_version#*:}_*.deb" | head -n1)
  if [ -z "$deb" ]; then
    log "repacking the host's nodejs $node_version into a .deb (dpkg-repack, takes ~4 min)"
    # It warns about every npm file the host's in-place npm upgrade removed: npm is taken from the registry instead.
    (cd "$CACHE" && dpkg-repack nodejs >"$CACHE/dpkg-repack.log" 2>&1) || die "dpkg-repack nodejs failed, see $CACHE/dpkg-repack.log"
    deb=$(find "$CACHE" -maxdepth 1 -name "nodejs_${node_version#*:}_*.deb" | head -n1)
    [ -n "$deb" ] || die "dpkg-repack wrote no nodejs_${node_version#*:}_*.deb in $CACHE"
  fi
  npm_tgz="$CACHE/npm-$NPM_VERSION.tgz"
  if [ ! -s "$npm_tgz" ]; then
    log "fetching npm@$NPM_VERSION from the npm registry (npm pack)"
    (cd "$CACHE" && npm pack "npm@$NPM_VERSION" --silent >/dev/null) || die "npm pack npm@$NPM_VERSION failed: the npm registry must be reachable"
  fi

  rootfs=$(mktemp -d /var/tmp/qm-base-rootfs.XXXXXX)
  unpack=$(mktemp -d /var/tmp/qm-base-node.XXXXXX)
  trap 'rm -rf "$rootfs" "$unpack"' EXIT
  log "debootstrap --variant=minbase bookworm (+ca-certificates) from $MIRROR"
  debootstrap --variant=minbase --include=ca-certificates --cache-dir="$CACHE/debs" bookworm "$rootfs" "$MIRROR" \
    >"$CACHE/debootstrap.log" 2>&1 || die "debootstrap failed, see $CACHE/debootstrap.log"

  # debian:bookworm-slim's dpkg excludes (docs except copyright, man, info, locales), applied now and for later apt-get.
  cat >"$rootfs/etc/dpkg/dpkg.cfg.d/docker" <<'EOF'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/groff/*
path-exclude /usr/share/info/*
path-exclude /usr/share/lintian/*
path-exclude /usr/share/linda/*
path-exclude /usr/share/locale/*
EOF
  find "$rootfs/usr/share/doc" -mindepth 1 -not -name copyright -not -type d -delete
  find "$rootfs/usr/share/doc" -mindepth 1 -type d -empty -delete
  rm -rf "$rootfs"/usr/share/{man,groff,info,lintian,linda,locale}/*
  rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/*.bin "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/log/*.log "$rootfs"/var/log/apt/*
  : >"$rootfs/etc/resolv.conf"
  echo localhost >"$rootfs/etc/hostname"

  # Node.js under /usr/local as the official image lays it out (not registered with dpkg: the nodesource
  # package depends on python3, which node:20-bookworm-slim does not carry).
  dpkg-deb -x "$deb" "$unpack"
  install -D -m 0755 "$unpack/usr/bin/node" "$rootfs/usr/local/bin/node"
  mkdir -p "$rootfs/usr/local/include" "$rootfs/usr/local/lib/node_modules/npm"
  cp -a "$unpack/usr/include/node" "$rootfs/usr/local/include/"
  cp -a "$unpack/usr/lib/node_modules/corepack" "$rootfs/usr/local/lib/node_modules/"
  tar -xzf "$npm_tgz" --strip-components=1 --no-same-owner -C "$rootfs/usr/local/lib/node_modules/npm"
  ln -sf node "$rootfs/usr/local/bin/nodejs"
  ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$rootfs/usr/local/bin/npm"
  ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$rootfs/usr/local/bin/npx"
  ln -sf ../lib/node_modules/corepack/dist/corepack.js "$rootfs/usr/local/bin/corepack"

  chroot "$rootfs" groupadd --gid 1000 node
  chroot "$rootfs" useradd --uid 1000 --gid node --shell /bin/bash --create-home node
  local got_node got_npm got_user
  got_node=$(chroot "$rootfs" /usr/local/bin/node --version)
  got_npm=$(chroot "$rootfs" /usr/local/bin/node /usr/local/lib/node_modules/npm/bin/npm-cli.js --version)
  got_user=$(chroot "$rootfs" id node)
  log "stand-in rootfs: node $got_node, npm $got_npm, $got_user, $(du -sh "$rootfs" | cut -f1)"
  [ "$got_user" = "uid=1000(node) gid=1000(node) groups=1000(node)" ] || die "unexpected node user: $got_user"

  ctr=$("${BUILDAH[@]}" from --pull=never scratch)
  mnt=$("${BUILDAH[@]}" mount "$ctr")
  tar -C "$rootfs" --numeric-owner --xattrs -cf - . | tar -C "$mnt" --numeric-owner --xattrs -xpf -
  "${BUILDAH[@]}" umount "$ctr" >/dev/null
  "${BUILDAH[@]}" config \
    --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    --env NODE_VERSION="${got_node#v}" \
    --cmd '["node"]' \
    --label "$STANDIN_LABEL=debootstrap minbase bookworm + host nodejs $node_version + npm $got_npm (deploy/image/build-offline.sh)" \
    --created-by "deploy/image/build-offline.sh" \
    "$ctr"
  "${BUILDAH[@]}" commit --rm --quiet "$ctr" "$BASE" >/dev/null
  rm -rf "$rootfs" "$unpack"
  trap - EXIT
  log "stand-in base $BASE committed in $(($(date +%s) - started)) s"
}

if [ "${QM_REBUILD_BASE:-0}" = 1 ] && base_exists; then
  base_is_standin || die "$BASE in storage is not this script's stand-in; remove it yourself if you mean to replace it"
  log "QM_REBUILD_BASE=1: removing the cached stand-in base"
  "${BUILDAH[@]}" rmi "$BASE" >/dev/null
fi
if ! base_exists; then
  build_base
elif base_is_standin; then
  log "using the cached stand-in base $BASE (QM_REBUILD_BASE=1 rebuilds it)"
else
  log "using $BASE found in storage (not a stand-in: pulled or loaded by someone)"
fi

# ── 3. the image ────────────────────────────────────────────────────────────────────────────────────
# A TLS-intercepting egress proxy (as on this machine: registry.npmjs.org answers with a certificate of
# the sandbox's own CA) makes `npm ci` fail with SELF_SIGNED_CERT_IN_CHAIN — npm 10.8.2 then prints
# "Exit handler never called!" and exits 0. The host's CA bundle is lent to the build only: mounted
# into the RUN steps with a global npmrc naming it (`cafile`); mounts are not part of any layer, and the
# final stage has no RUN, so the image does not carry it. QM_BUILD_CA_FILE='' turns this off.
ca_file=${QM_BUILD_CA_FILE-${NODE_EXTRA_CA_CERTS:-}}
bud_mounts=()
if [ -n "$ca_file" ]; then
  [ -r "$ca_file" ] || die "QM_BUILD_CA_FILE/NODE_EXTRA_CA_CERTS=$ca_file is not a readable file"
  mkdir -p "$CACHE"
  printf 'cafile=/run/qm-build-ca.crt\n' >"$CACHE/build-npmrc"
  bud_mounts+=(--volume "$ca_file:/run/qm-build-ca.crt:ro" --volume "$CACHE/build-npmrc:/usr/local/etc/npmrc:ro")
  log "lending the build the CA bundle $ca_file (npm cafile; not copied into the image)"
fi
log "buildah bud -f deploy/Dockerfile -t $IMAGE $REPO"
started=$(date +%s)
"${BUILDAH[@]}" bud --pull=never --isolation chroot --network host "${bud_mounts[@]}" \
  -f "$REPO/deploy/Dockerfile" -t "$IMAGE" "$REPO" || die "buildah bud failed (output above)"
build_seconds=$(($(date +%s) - started))
# Untagged leftovers of earlier builds of the same tag.
"${BUILDAH[@]}" rmi --prune >/dev/null 2>&1 || true
size=$(podman --storage-driver vfs image inspect --format '{{.Size}}' "$IMAGE")
log "built $IMAGE in ${build_seconds} s; image size $((size / 1000000)) MB ($size bytes, uncompressed)"
log "run it: podman --storage-driver vfs run --rm --network host -e QM_ADMIN_TOKEN=… $IMAGE api   (checks: deploy/image/smoke.sh)"
