#!/usr/bin/env bash
# `make cluster` (its third line): build (or reuse) the Argo CD harness (main.go and its siblings), on
# Argo CD v3.6.2 and its gitops-engine (go.mod: Argo CD's own replace directives), into a cache folder of
# its own, keyed by this folder's sources and the Go toolchain:
#
#   ${TRAINJOB_RESOURCES_CACHE:-$HOME/.cache/trainjob-resources}/argocd/<key>/argocd-harness
#
# and points ${cache}/argocd/current at it (tests/cluster/argocd.py runs current/argocd-harness). Apart from
# the control plane's cache (tests/cluster/build.sh): changing the harness never rebuilds that.
# Argo CD 3.6 needs go >= 1.27: the toolchain is fetched from the module proxy (GOTOOLCHAIN=go1.27.3).
# Without Go, or when the build fails, outside CI this prints a skip and exits 0; in CI (CI=true) it fails.
set -euo pipefail
cd "$(dirname "$0")"

toolchain=go1.27.3

skip() {
  if [ "${CI:-}" = true ]; then
    echo "argocd: $1" >&2
    exit 1
  fi
  echo "argocd: skipped, $1 (the Argo CD tests will skip)" >&2
  exit 0
}

command -v go >/dev/null 2>&1 || skip "Go is not installed"

cache_root="${TRAINJOB_RESOURCES_CACHE:-${HOME}/.cache/trainjob-resources}/argocd"
key="argocd-v3.6.2-$(
  {
    echo "${toolchain}"
    go env GOOS GOARCH
    sha256sum build.sh go.mod go.sum ./*.go
  } | sha256sum | cut -c1-12
)"
out="${cache_root}/${key}"

point_current() {
  ln -sfn "${key}" "${cache_root}/.current-$$"
  mv -T "${cache_root}/.current-$$" "${cache_root}/current"
}

if [ -x "${out}/argocd-harness" ]; then
  point_current
  echo "argocd: up to date: ${out}"
  exit 0
fi

mkdir -p "${cache_root}"
tmp="$(mktemp -d "${cache_root}/.build-XXXXXX")"
trap 'rm -rf "${tmp}"' EXIT
echo "argocd: building Argo CD v3.6.2's harness (cold: about 9 CPU-minutes, 25 min wall on a busy two-core machine) into ${out}" >&2
if ! GOTOOLCHAIN="${toolchain}" GOFLAGS="${GOFLAGS:--mod=mod}" nice go build -trimpath -buildvcs=false \
  -o "${tmp}/argocd-harness" .; then
  skip "the build failed (Go's error above)"
fi
chmod 755 "${tmp}"
rm -rf "${out}"
mv -T "${tmp}" "${out}"
trap - EXIT
point_current
echo "argocd: built ${out}"
