#!/usr/bin/env bash
# `make cluster` (its second line): build (or reuse) the Kueue harness on Kueue v0.19.2 (../kueue's source,
# with -tags kueue_v0_19 on this folder's go.mod and go.sum, which name the release), its CRDs and webhook
# configuration, into a cache folder of its own, keyed by the files the binary is built from and the Go version:
#
#   ${TRAINJOB_RESOURCES_CACHE:-$HOME/.cache/trainjob-resources}/kueue-v0.19/<key>/
#     bin/kueue crds/ webhook.yaml paths.json
#
# and points ${cache}/kueue-v0.19/current at it (tests/cluster/controlplane.py: ControlPlane(kueue="v0.19.2")).
# Apart from the control plane's cache (tests/cluster/build.sh, which builds Kueue v0.17.0): changing this
# never rebuilds that. Without Go outside CI this prints a skip and exits 0; in CI (CI=true) it fails.
set -euo pipefail
cd "$(dirname "$0")"

if ! command -v go >/dev/null 2>&1; then
  if [ "${CI:-}" = true ]; then
    echo "kueue-v0.19: Go is required in CI" >&2
    exit 1
  fi
  echo "kueue-v0.19: skipped, Go is not installed (the Kueue v0.19 tests will skip)" >&2
  exit 0
fi

modver() { awk -v m="$1" '$1 == m && $2 ~ /^v/ { print $2; exit }' go.mod; }
kueue_version="$(modver sigs.k8s.io/kueue)"
kueue_trainer="$(modver github.com/kubeflow/trainer/v2)"
cache_root="${TRAINJOB_RESOURCES_CACHE:-${HOME}/.cache/trainjob-resources}/kueue-v0.19"
# The harness's source: ../kueue/*.go but the other releases' release_v0_<minor>.go (build-tagged out).
minor="${kueue_version%.*}" # v0.19: the build tag kueue_v0_19 selects release_v0_19.go
sources=()
for f in ../kueue/*.go; do
  case "${f}" in ../kueue/release_v*.go) [ "${f}" = "../kueue/release_${minor//./_}.go" ] || continue ;; esac
  sources+=("${f}")
done
key="kueue-${kueue_version}_$(
  {
    go env GOVERSION GOOS GOARCH
    sha256sum build.sh go.mod go.sum "${sources[@]}"
  } | sha256sum | cut -c1-12
)"
out="${cache_root}/${key}"

point_current() {
  ln -sfn "${key}" "${cache_root}/.current-$$"
  mv -T "${cache_root}/.current-$$" "${cache_root}/current"
}

if [ -s "${out}/paths.json" ]; then
  point_current
  echo "kueue-v0.19: up to date: ${out}"
  exit 0
fi

mkdir -p "${cache_root}"
tmp="$(mktemp -d "${cache_root}/.build-XXXXXX")"
chmod 755 "${tmp}"
trap 'chmod -R u+w "${tmp}" 2>/dev/null; rm -rf "${tmp}"' EXIT
mkdir -p "${tmp}/bin" "${tmp}/crds"
echo "kueue-v0.19: building the Kueue ${kueue_version} harness (Trainer ${kueue_trainer} inside) into ${out}" >&2
(cd ../kueue && go build -p 2 -trimpath -buildvcs=false -modfile=../kueue-v0.19/go.mod -tags "kueue_${minor//./_}" \
  -o "${tmp}/bin/kueue" .)
# As tests/cluster/build.sh takes v0.17.0's: the CRDs as controller-gen writes them (no conversion webhook;
# the harness reads and writes v1beta2, the stored version) and the webhook configuration.
kueue_dir="$(go mod download sigs.k8s.io/kueue && go list -m -f '{{.Dir}}' sigs.k8s.io/kueue)"
cp "${kueue_dir}"/config/components/crd/bases/kueue.x-k8s.io_*.yaml "${tmp}/crds/"
cp "${kueue_dir}/config/components/webhook/manifests.yaml" "${tmp}/webhook.yaml"
chmod -R u+w "${tmp}"
cat >"${tmp}/paths.json" <<EOF
{
  "harness": "${out}/bin/kueue",
  "crds": "${out}/crds",
  "webhook": "${out}/webhook.yaml",
  "versions": {"kueue": "${kueue_version}", "kueue-trainer": "${kueue_trainer}"}
}
EOF
if mv -T "${tmp}" "${out}" 2>/dev/null; then
  trap - EXIT
else
  echo "kueue-v0.19: another build of ${key} finished first: keeping it" >&2
fi
point_current
# Keep the two most recently built (another checkout may still use the older one).
ls -1dt "${cache_root}"/kueue-* | tail -n +3 | while read -r old; do
  [ "${old}" = "${out}" ] || { chmod -R u+w "${old}"; rm -rf "${old}"; }
done
echo "kueue-v0.19: built ${out}"
