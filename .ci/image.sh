#!/usr/bin/env bash
# The real container engine and image for CI's image tests (tests/test_image.py), on Debian:
#
#   bash .ci/image.sh          # then: . "${TMPDIR:-/tmp}/trainjob-resources-ci/env.sh"
#
# 1. installs podman, runc and debootstrap with apt (crun fails on these cgroup v1 hosts: runc);
# 2. writes a containers.conf: no default ulimits (this sandbox cannot set them), runtime runc;
# 3. makes a base image standing in for python:3.11-slim (no registry serves images here):
#    a debootstrapped Debian bookworm (from the mirror the host's apt sources name) with python3,
#    pip and the host's CA bundle, cached by day;
# 4. builds the repository's Dockerfile on it (--build-arg PYTHON_IMAGE; users keep the default)
#    and tags the result as the image the examples name;
# 5. writes env.sh: CONTAINERS_CONF, a `docker` that execs podman first on PATH (kustomize's
#    container runtime calls `docker`), KPT_FN_RUNTIME=podman (kpt) and TRAINJOB_RESOURCES_IMAGE
#    (the built image's ID, for tests/engine.py).
set -euo pipefail
cd "$(dirname "$0")/.."

work="${TRAINJOB_RESOURCES_CI_DIR:-${TMPDIR:-/tmp}/trainjob-resources-ci}"
day="$(date -u +%Y%m%d)"
# The version is written once, as the package's __version__ (pyproject.toml reads it from there).
version="$(sed -n 's/^__version__ = "\(.*\)"$/\1/p' function/trainjob_resources/__init__.py | head -n 1)"
test -n "${version}" || { echo ".ci/image.sh: no __version__ in function/trainjob_resources/__init__.py" >&2; exit 1; }
image="ghcr.io/trainjob-resources/trainjob-resources:${version}"
base="localhost/trainjob-resources-ci/python:3.11-slim-${day}"
mkdir -p "${work}/bin"

started=${SECONDS}
step() { printf '\n== image setup (%ss): %s\n' "$((SECONDS - started))" "$*"; }
if [ "$(id -u)" != 0 ]; then echo ".ci/image.sh: run it as root (rootful podman, apt, debootstrap)" >&2; exit 1; fi

step "packages: podman runc debootstrap"
if ! command -v podman >/dev/null || ! command -v runc >/dev/null || ! command -v debootstrap >/dev/null; then
  apt-get update -qq
  env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    podman runc debootstrap </dev/null >/dev/null
fi
podman --version
runc --version | head -n 1

step "containers.conf"
cat >"${work}/containers.conf" <<'EOF'
[containers]
default_ulimits = []

[engine]
runtime = "runc"
EOF
export CONTAINERS_CONF="${work}/containers.conf"

# debootstrap fetches from the Debian mirror this machine's apt uses (the first `deb` source that is
# not a security archive, in /etc/apt/sources.list.d/*.sources or /etc/apt/sources.list);
# TRAINJOB_RESOURCES_DEBIAN_MIRROR overrides it.
debian_mirror() {
  local f
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -r "${f}" ] || continue
    awk 'BEGIN { RS = ""; FS = "\n" }
      { t = ""; u = ""; s = ""
        for (i = 1; i <= NF; i++) {
          if ($i ~ /^[ \t]*#/) continue
          if ($i ~ /^Types:/) t = $i; if ($i ~ /^URIs:/) u = $i; if ($i ~ /^Suites:/) s = $i
        }
        if (t ~ /[: \t]deb([ \t]|$)/ && u != "" && s !~ /security/) {
          sub(/^URIs:[ \t]*/, "", u); split(u, a, /[ \t]+/); print a[1]; exit
        } }' "${f}"
  done
  if [ -r /etc/apt/sources.list ]; then
    awk '$1 == "deb" { i = 2; if ($i ~ /^\[/) { while ($i !~ /\]$/) i++; i++ }
      if ($(i + 1) !~ /security/) { print $i; exit } }' /etc/apt/sources.list
  fi
}
mirror="${TRAINJOB_RESOURCES_DEBIAN_MIRROR:-$(debian_mirror | head -n 1)}"

step "base image ${base} (stands in for python:3.11-slim)"
if ! podman image exists "${base}"; then
  tarball="${work}/base-${day}.tar"
  if [ ! -s "${tarball}" ]; then
    if [ -z "${mirror}" ]; then
      echo ".ci/image.sh: no Debian mirror in /etc/apt/sources.list.d/*.sources or /etc/apt/sources.list" \
        "(a 'deb' source); set TRAINJOB_RESOURCES_DEBIAN_MIRROR to one" >&2
      exit 1
    fi
    echo "debootstrap bookworm from ${mirror} (this machine's apt source)"
    root="${work}/rootfs-${day}"
    rm -rf "${root}"
    debootstrap --variant=minbase --include=python3,python3-venv,python3-pip,ca-certificates \
      bookworm "${root}" "${mirror}" >"${work}/debootstrap.log" 2>&1 ||
      { tail -n 30 "${work}/debootstrap.log" >&2; exit 1; }
    # pip inside the build reaches PyPI through this host's CA bundle.
    cp /etc/ssl/certs/ca-certificates.crt "${root}/etc/ssl/certs/ca-certificates.crt"
    ln -sf python3 "${root}/usr/bin/python"
    ln -sf pip3 "${root}/usr/bin/pip"
    rm -f "${root}"/usr/lib/python3.*/EXTERNALLY-MANAGED
    rm -rf "${root}"/var/cache/apt/archives/*.deb "${root}"/var/lib/apt/lists/*
    tar -C "${root}" -c . >"${tarball}.part"
    mv "${tarball}.part" "${tarball}"
    rm -rf "${root}"
    find "${work}" -maxdepth 1 -name 'base-*.tar' ! -name "base-${day}.tar" -delete
  fi
  podman import --change 'ENV LANG=C.UTF-8' --change 'CMD ["python3"]' - "${base}" <"${tarball}" >/dev/null
fi
podman run --rm --network none "${base}" python --version

step "podman build ${image}"
podman build --network host --build-arg "PYTHON_IMAGE=${base}" --iidfile "${work}/image-id" -t "${image}" .
# The tests get the image's ID: a tag can move if something else builds on this machine meanwhile.
image_id="$(cat "${work}/image-id")"
podman image inspect --format '{{.Id}} {{.Config.User}} {{.Config.Entrypoint}}' "${image_id}"

step "docker shim and env.sh"
cat >"${work}/bin/docker" <<'EOF'
#!/bin/sh
# kustomize's container runtime calls `docker`: this engine is podman.
exec podman "$@"
EOF
chmod +x "${work}/bin/docker"
cat >"${work}/env.sh" <<EOF
export CONTAINERS_CONF='${work}/containers.conf'
export PATH='${work}/bin':"\${PATH}"
export KPT_FN_RUNTIME=podman
export TRAINJOB_RESOURCES_IMAGE='${image_id}'
EOF
step "done: . ${work}/env.sh"
