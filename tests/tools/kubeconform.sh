#!/usr/bin/env bash
# `make kubeconform`: build (or reuse) kubeconform by module version for tests/test_schema.py, which
# runs it on the schemas of `trainjob-resources schema` (issue 32), into
#
#   ${TRAINJOB_RESOURCES_CACHE:-$HOME/.cache/trainjob-resources}/kubeconform/<version>/kubeconform
#
# Without Go: outside CI a skip (the test skips too), in CI (CI=true) a failure.
set -euo pipefail
KUBECONFORM_MODULE=github.com/yannh/kubeconform/cmd/kubeconform
KUBECONFORM_VERSION=v0.7.0 # tests/test_schema.py names the same version

out="${TRAINJOB_RESOURCES_CACHE:-${HOME}/.cache/trainjob-resources}/kubeconform/${KUBECONFORM_VERSION}"
if [ -x "${out}/kubeconform" ]; then
  echo "make kubeconform: up to date: ${out}/kubeconform"
  exit 0
fi
if ! command -v go >/dev/null 2>&1; then
  if [ "${CI:-}" = true ]; then
    echo "make kubeconform: Go is required in CI (kubeconform is built from its Go module)" >&2
    exit 1
  fi
  echo "make kubeconform: skipped, Go is not installed (the kubeconform test will skip)" >&2
  exit 0
fi
mkdir -p "${out}"
tmp="$(mktemp -d "${out}/.build-XXXXXX")"
trap 'rm -rf "${tmp}"' EXIT
GOBIN="${tmp}" go install -trimpath "${KUBECONFORM_MODULE}@${KUBECONFORM_VERSION}"
mv "${tmp}/kubeconform" "${out}/kubeconform"
echo "make kubeconform: built ${out}/kubeconform"
