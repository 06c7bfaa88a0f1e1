#!/usr/bin/env bash
# Called by `make cluster`: build (or reuse) Helm v4 and Helm v3 from their Go modules, for the Helm
# post-renderer tests (tests/test_helm_post_renderer.py), into a cache folder keyed by both versions,
# this script and the Go toolchain:
#
#   ${TRAINJOB_RESOURCES_CACHE:-$HOME/.cache/trainjob-resources}/helm/<key>/
#     bin/helm-<v4 version> bin/helm-<v3 version>
#     paths.json ({"v4": {"version", "path"}, "v3": {...}}, what the tests read)
#
# and points ${cache}/helm/current at it. Helm v4's --post-renderer names a plugin (postrenderer/v1),
# v3's runs an executable: the example ships both. v3.21.4 is the newest v3 release the project approves.
# Without Go: outside CI a skip (the tests skip too), in CI (CI=true) a failure.
set -euo pipefail
cd "$(dirname "$0")"

HELM_V4=v4.3.2
HELM_V3=v3.21.4

if ! command -v go >/dev/null 2>&1; then
  if [ "${CI:-}" = true ]; then
    echo "make cluster (helm): Go is required in CI (Helm is built from its Go module)" >&2
    exit 1
  fi
  echo "make cluster (helm): skipped, Go is not installed (the Helm tests will skip)" >&2
  exit 0
fi

cache_root="${TRAINJOB_RESOURCES_CACHE:-${HOME}/.cache/trainjob-resources}/helm"
hash="$({ go env GOVERSION GOOS GOARCH; sha256sum helm.sh; } | sha256sum | cut -c1-12)"
key="helm-${HELM_V4}_helm-${HELM_V3}_${hash}"
out="${cache_root}/${key}"

point_current() {
  ln -sfn "${key}" "${cache_root}/.current-$$"
  mv -T "${cache_root}/.current-$$" "${cache_root}/current"
}

if [ -s "${out}/paths.json" ]; then
  touch "${out}"
  point_current
  echo "make cluster (helm): up to date: ${out}"
  exit 0
fi

mkdir -p "${cache_root}"
tmp="$(mktemp -d "${cache_root}/.build-XXXXXX")"
chmod 755 "${tmp}"
trap 'chmod -R u+w "${tmp}" 2>/dev/null; rm -rf "${tmp}"' EXIT
mkdir -p "${tmp}/bin"

# One Helm release as its Makefile stamps a tagged build: -X .../internal/version.version=<tag>,
# metadata empty (a tag clears "unreleased"), gitTreeState=clean; gitCommit stays empty, since the
# module proxy gives no commit. v3 also stamps the Kubernetes version `helm template` assumes
# (.Capabilities.KubeVersion) from its client-go (its Makefile's K8S_MODULES_VER); v4 reads that from
# the build info at run time (pkg/chart/common/capabilities.go), so its Makefile stamps none.
build_helm() {
  local module="$1" version="$2" stamp
  stamp="-X ${module}/internal/version.version=${version} -X ${module}/internal/version.metadata="
  stamp="${stamp} -X ${module}/internal/version.gitTreeState=clean"
  if [ "${module}" = helm.sh/helm/v3 ]; then
    local gomod minor
    gomod="$(go mod download -json "${module}@${version}" | sed -n 's/.*"GoMod": "\(.*\)",*/\1/p')"
    minor="$(awk '$1 == "k8s.io/client-go" { split($2, v, "."); print v[2]; exit }' "${gomod}")"
    for pkg in pkg/lint/rules pkg/chartutil; do
      stamp="${stamp} -X ${module}/${pkg}.k8sVersionMajor=1 -X ${module}/${pkg}.k8sVersionMinor=${minor}"
    done
  fi
  echo "== make cluster (helm): ${module}@${version}"
  GOBIN="${tmp}/gobin" CGO_ENABLED=0 go install -trimpath -ldflags "${stamp}" "${module}/cmd/helm@${version}"
  mv "${tmp}/gobin/helm" "${tmp}/bin/helm-${version}"
}
build_helm helm.sh/helm/v4 "${HELM_V4}"
build_helm helm.sh/helm/v3 "${HELM_V3}"
rmdir "${tmp}/gobin"

cat >"${tmp}/paths.json" <<EOF
{
  "v4": {"version": "${HELM_V4}", "path": "${out}/bin/helm-${HELM_V4}"},
  "v3": {"version": "${HELM_V3}", "path": "${out}/bin/helm-${HELM_V3}"}
}
EOF
if mv -T "${tmp}" "${out}" 2>/dev/null; then
  trap - EXIT
else
  echo "make cluster (helm): another build of ${key} finished first: keeping it"
fi
point_current
# Keep the three most recently used builds (another checkout may still use an older one).
ls -1dt "${cache_root}"/helm-* | tail -n +4 | while read -r old; do
  [ "${old}" = "${out}" ] || { chmod -R u+w "${old}"; rm -rf "${old}"; }
done
echo "make cluster (helm): built ${out}"
