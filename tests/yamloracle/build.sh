#!/usr/bin/env bash
# `make cluster` (one line of it): build (or reuse) the YAML oracle, main.go, from the module versions in
# go.mod/go.sum, into a cache folder keyed by those files and Go's version:
#
#   ${TRAINJOB_RESOURCES_CACHE:-$HOME/.cache/trainjob-resources}/yamloracle/<key>/yamloracle
#
# and points ${cache}/yamloracle/current at it (tests/test_yaml_oracle.py runs current/yamloracle).
# Its own cache, apart from the control plane's (tests/cluster/build.sh): changing this program never
# rebuilds that. Without Go, outside CI this prints a skip and exits 0; in CI (CI=true) it fails.
set -euo pipefail
cd "$(dirname "$0")"

if ! command -v go >/dev/null 2>&1; then
  if [ "${CI:-}" = true ]; then
    echo "yamloracle: Go is required in CI" >&2
    exit 1
  fi
  echo "yamloracle: skipped, Go is not installed (the YAML oracle test will skip)" >&2
  exit 0
fi

cache_root="${TRAINJOB_RESOURCES_CACHE:-${HOME}/.cache/trainjob-resources}/yamloracle"
key="$(
  {
    go env GOVERSION GOOS GOARCH
    sha256sum build.sh go.mod go.sum main.go
  } | sha256sum | cut -c1-12
)"
out="${cache_root}/${key}"

point_current() {
  ln -sfn "${key}" "${cache_root}/.current-$$"
  mv -T "${cache_root}/.current-$$" "${cache_root}/current"
}

if [ -x "${out}/yamloracle" ]; then
  point_current
  echo "yamloracle: up to date: ${out}"
  exit 0
fi

mkdir -p "${cache_root}"
tmp="$(mktemp -d "${cache_root}/.build-XXXXXX")"
trap 'rm -rf "${tmp}"' EXIT
GOTOOLCHAIN=local GOFLAGS="${GOFLAGS:--mod=mod}" go build -trimpath -buildvcs=false -o "${tmp}/yamloracle" .
chmod 755 "${tmp}"
rm -rf "${out}"
mv -T "${tmp}" "${out}"
trap - EXIT
point_current
echo "yamloracle: built ${out}"
