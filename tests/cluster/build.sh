#!/usr/bin/env bash
# `make cluster`: build (or reuse) the local control plane and the standalone tools, by module version,
# into a cache folder keyed by every pinned version and the harness's source:
#
#   ${TRAINJOB_RESOURCES_CACHE:-$HOME/.cache/trainjob-resources}/cluster/<key>/
#     bin/kube-apiserver bin/etcd bin/harness bin/harness-<trainer>... bin/kueue bin/kustomize-<v>...
#     crds/ (upstream Trainer's, JobSet's and scheduler-plugins' CRDs, copied out of the module cache)
#     webhook/manifests.yaml (upstream Trainer's webhook configuration)
#     releases/<trainer>/crds/ releases/<trainer>/webhook/manifests.yaml (the same, for each older release)
#     kueue/crds/ kueue/webhook.yaml (upstream Kueue's CRDs and webhook configuration)
#     paths.json (what tests/cluster/controlplane.py reads)
#
# and points ${cache}/cluster/current at it. A warm run only hashes a few files. A module that cannot
# be fetched or built fails with Go's own error. Without Go, outside CI this prints a skip and exits 0;
# in CI (CI=true) it fails.
set -euo pipefail
cd "$(dirname "$0")"

# Pinned here (the Go modules' versions are in go.mod/go.sum of this folder and tools/*/; an older Trainer
# release's in trainer-v<minor>.mod/.sum, the same harness built with -modfile).
# kustomize: the newest v5 that builds with this machine's Go (v5.8.3 needs go >= 1.27) and v5.4,
# the oldest v5 minor still in wide use. Helm (v4 and v3) is built by tests/tools/helm.sh.
KUSTOMIZE_MODULE=sigs.k8s.io/kustomize/kustomize/v5
KUSTOMIZE_VERSIONS=(v5.8.2 v5.4.3)

if ! command -v go >/dev/null 2>&1; then
  if [ "${CI:-}" = true ]; then
    echo "make cluster: Go is required in CI (the control plane is built from Go modules)" >&2
    exit 1
  fi
  echo "make cluster: skipped, Go is not installed (the control-plane tests will skip)" >&2
  exit 0
fi

cache_root="${TRAINJOB_RESOURCES_CACHE:-${HOME}/.cache/trainjob-resources}/cluster"
modver() { awk -v m="$1" '$1 == m && $2 ~ /^v/ { print $2; exit }' "$2"; }
k8s_version="$(modver k8s.io/kubernetes tools/apiserver/go.mod)"
etcd_version="$(modver go.etcd.io/etcd/server/v3 tools/etcd/go.mod)"
trainer_version="$(modver github.com/kubeflow/trainer/v2 go.mod)"
# Older Trainer releases, newest first: the same harness on the module file that names each.
declare -A release_mod=()
for mod in trainer-v*.mod; do
  if [ -e "${mod}" ]; then release_mod["$(modver github.com/kubeflow/trainer/v2 "${mod}")"]="${mod}"; fi
done
releases=()
[ "${#release_mod[@]}" -eq 0 ] || mapfile -t releases < <(printf '%s\n' "${!release_mod[@]}" | sort -rV)
kueue_version="$(modver sigs.k8s.io/kueue kueue/go.mod)"
# The Kueue harness's source: kueue/*.go but the other releases' release_v0_<minor>.go (build-tagged out;
# kueue-v0.19/build.sh builds the same source on its own module file).
kueue_minor="${kueue_version%.*}"
kueue_sources=()
for f in kueue/*.go; do
  case "${f}" in kueue/release_v*.go) [ "${f}" = "kueue/release_${kueue_minor//./_}.go" ] || continue ;; esac
  kueue_sources+=("${f}")
done
sources=(build.sh go.mod go.sum trainer-v*.mod trainer-v*.sum harness/*.go "${kueue_sources[@]}" kueue/go.mod kueue/go.sum
  tools/*/go.mod tools/*/go.sum)
hash="$(
  {
    go env GOVERSION GOOS GOARCH
    echo "${KUSTOMIZE_VERSIONS[*]}"
    sha256sum "${sources[@]}"
  } | sha256sum | cut -c1-12
)"
key="k8s-${k8s_version}_etcd-${etcd_version}_trainer-${trainer_version}$(IFS=; echo "${releases[*]/#/-}")_${hash}"
out="${cache_root}/${key}"

# Point current at a build, atomically (other checkouts' tests may be reading it).
point_current() {
  ln -sfn "${key}" "${cache_root}/.current-$$"
  mv -T "${cache_root}/.current-$$" "${cache_root}/current"
}

if [ -s "${out}/paths.json" ]; then
  touch "${out}" # most recently used: the last to be pruned
  point_current
  echo "make cluster: up to date: ${out}"
  exit 0
fi

started=${SECONDS}
step() { printf '== make cluster (%ss): %s\n' "$((SECONDS - started))" "$*"; }
mkdir -p "${cache_root}"
tmp="$(mktemp -d "${cache_root}/.build-XXXXXX")"
chmod 755 "${tmp}"
trap 'chmod -R u+w "${tmp}" 2>/dev/null; rm -rf "${tmp}"' EXIT
mkdir -p "${tmp}/bin" "${tmp}/kueue/crds"
build=(go build -p 2 -trimpath -buildvcs=false)

step "kube-apiserver (k8s.io/kubernetes ${k8s_version})"
# The version Kubernetes' own build stamps (hack/lib/version.sh), so /version and --version say it.
v="${k8s_version#v}"
stamp="-X k8s.io/component-base/version.gitVersion=${k8s_version} -X k8s.io/component-base/version.gitMajor=${v%%.*}"
stamp="${stamp} -X k8s.io/component-base/version.gitMinor=$(echo "${v}" | cut -d. -f2) -X k8s.io/component-base/version.gitTreeState=clean"
(cd tools/apiserver && "${build[@]}" -ldflags "${stamp}" -o "${tmp}/bin/kube-apiserver" k8s.io/kubernetes/cmd/kube-apiserver)
step "etcd (go.etcd.io/etcd/server/v3 ${etcd_version})"
(cd tools/etcd && "${build[@]}" -o "${tmp}/bin/etcd" go.etcd.io/etcd/server/v3)
step "harness (github.com/kubeflow/trainer/v2 ${trainer_version})"
"${build[@]}" -o "${tmp}/bin/harness" ./harness
for release in "${releases[@]}"; do
  step "harness (github.com/kubeflow/trainer/v2 ${release}, ${release_mod[${release}]})"
  "${build[@]}" -modfile="${release_mod[${release}]}" -o "${tmp}/bin/harness-${release}" ./harness
done
step "kueue harness (sigs.k8s.io/kueue ${kueue_version}, its own module: Kueue builds on another Trainer)"
(cd kueue && "${build[@]}" -o "${tmp}/bin/kueue" .)
for v in "${KUSTOMIZE_VERSIONS[@]}"; do
  step "kustomize ${v}"
  # The version kustomize's release build stamps (v5.4 reports "(devel)" without it).
  GOBIN="${tmp}/gobin" go install -trimpath -ldflags "-X sigs.k8s.io/kustomize/api/provenance.version=${v}" \
    "${KUSTOMIZE_MODULE}@${v}"
  mv "${tmp}/gobin/kustomize" "${tmp}/bin/kustomize-${v}"
done
rmdir "${tmp}/gobin"

step "CRDs and webhook configuration, from the module cache"
# A release's CRDs and webhook configuration into $2, from the modules its module file ($1) names.
trainer_assets() {
  local dest="$2" trainer_dir jobset_dir sp_dir
  go mod download -modfile="$1" github.com/kubeflow/trainer/v2 sigs.k8s.io/jobset sigs.k8s.io/scheduler-plugins
  trainer_dir="$(go list -modfile="$1" -m -f '{{.Dir}}' github.com/kubeflow/trainer/v2)"
  jobset_dir="$(go list -modfile="$1" -m -f '{{.Dir}}' sigs.k8s.io/jobset)"
  sp_dir="$(go list -modfile="$1" -m -f '{{.Dir}}' sigs.k8s.io/scheduler-plugins)"
  mkdir -p "${dest}/crds" "${dest}/webhook"
  cp "${trainer_dir}"/manifests/base/crds/trainer.kubeflow.org_*.yaml "${dest}/crds/"
  cp "${jobset_dir}"/config/components/crd/bases/*.yaml "${dest}/crds/"
  # Upstream's framework.go installs scheduler-plugins' manifests/coscheduling/crd.yaml (its Makefile
  # copies it from this module) and Volcano's PodGroup CRD (its Makefile curls it from GitHub, which is
  # not reachable here, and no volcano.sh/volcano module is served): Trainer then logs "PodGroup CRDs
  # must be installed in advance" and runs without the Volcano plugin's watches.
  cp "${sp_dir}/manifests/coscheduling/crd.yaml" "${dest}/crds/scheduler-plugins_coscheduling_crd.yaml"
  # The webhook configuration as upstream deploys it: manifests/base/webhook built with its patches,
  # which (from v2.3.0) add the objectSelector that lets a runtime labelled
  # trainer.kubeflow.org/webhook-validation: disabled through (patch_validating.yaml). Upstream's
  # framework.go installs manifests.yaml without them; envtest rewrites each clientConfig to the harness.
  "${tmp}/bin/kustomize-${KUSTOMIZE_VERSIONS[0]}" build "${trainer_dir}/manifests/base/webhook" >"${dest}/webhook/manifests.yaml"
  if grep -q 'trainer.kubeflow.org/webhook-validation' "${trainer_dir}/manifests/base/webhook/patch_validating.yaml"; then
    grep -q 'trainer.kubeflow.org/webhook-validation' "${dest}/webhook/manifests.yaml" ||
      { echo "make cluster: the built webhook configuration has no webhook-validation objectSelector" >&2; exit 1; }
  fi
}
trainer_assets go.mod "${tmp}"
for release in "${releases[@]}"; do
  trainer_assets "${release_mod[${release}]}" "${tmp}/releases/${release}"
done
# Kueue's CRDs as controller-gen writes them (config/components/crd/bases: no conversion webhook, which
# its kustomization patches in; the harness reads and writes v1beta2, the stored version) and its
# webhook configuration (config/components/webhook/manifests.yaml; the harness keeps the webhooks it serves).
kueue_dir="$(cd kueue && go mod download sigs.k8s.io/kueue && go list -m -f '{{.Dir}}' sigs.k8s.io/kueue)"
cp "${kueue_dir}"/config/components/crd/bases/kueue.x-k8s.io_*.yaml "${tmp}/kueue/crds/"
cp "${kueue_dir}/config/components/webhook/manifests.yaml" "${tmp}/kueue/webhook.yaml"
kueue_trainer="$(modver github.com/kubeflow/trainer/v2 kueue/go.mod)"
chmod -R u+w "${tmp}"

step "paths.json"
OUT="${out}" TMP="${tmp}" K8S="${k8s_version}" ETCD="${etcd_version}" TRAINER="${trainer_version}" \
  KVERS="${KUSTOMIZE_VERSIONS[*]}" GOVERSION="$(go env GOVERSION)" \
  JOBSET="$(modver sigs.k8s.io/jobset go.mod)" CR="$(modver sigs.k8s.io/controller-runtime go.mod)" \
  SP="$(modver sigs.k8s.io/scheduler-plugins go.mod)" KUEUE="${kueue_version}" KUEUE_TRAINER="${kueue_trainer}" \
  RELEASES="$(for r in "${releases[@]}"; do printf '%s=%s ' "${r}" "${release_mod[${r}]}"; done)" \
  python3 - <<'EOF'
import json, os, re
e = os.environ
out = e["OUT"]
b = lambda name: os.path.join(out, "bin", name)


def release(modfile, harness, folder):
    """A Trainer release's harness and assets, and the versions its module file builds it on."""
    text = open(modfile).read()
    mod = lambda m: re.search(rf"^\s*{re.escape(m)} (v\S+)", text, re.M).group(1)
    names = ("github.com/kubeflow/trainer/v2", "sigs.k8s.io/jobset", "sigs.k8s.io/scheduler-plugins",
             "sigs.k8s.io/controller-runtime", "k8s.io/client-go")
    keys = ("trainer", "jobset", "scheduler-plugins", "controller-runtime", "client-go")
    return {
        "harness": b(harness),
        "crds": os.path.join(folder, "crds"),
        "webhook": os.path.join(folder, "webhook", "manifests.yaml"),
        "versions": {k: mod(m) for k, m in zip(keys, names)},
    }


paths = {
    "kube-apiserver": b("kube-apiserver"),
    "etcd": b("etcd"),
    "harness": b("harness"),
    "assets": os.path.join(out, "bin"),
    "kustomize": {v: b(f"kustomize-{v}") for v in e["KVERS"].split()},
    "crds": os.path.join(out, "crds"),
    "webhook": os.path.join(out, "webhook", "manifests.yaml"),
    # Every Trainer release with a harness, the newest first (go.mod's); ControlPlane(trainer=...).
    "releases": {
        e["TRAINER"]: release("go.mod", "harness", out),
        **{
            v: release(modfile, f"harness-{v}", os.path.join(out, "releases", v))
            for v, modfile in (pair.split("=") for pair in e["RELEASES"].split())
        },
    },
    "kueue": {
        "harness": b("kueue"),
        "crds": os.path.join(out, "kueue", "crds"),
        "webhook": os.path.join(out, "kueue", "webhook.yaml"),
    },
    "versions": {
        "kubernetes": e["K8S"],
        "etcd": e["ETCD"],
        "trainer": e["TRAINER"],
        "jobset": e["JOBSET"],
        "scheduler-plugins": e["SP"],
        "controller-runtime": e["CR"],
        "kueue": e["KUEUE"],
        "kueue-trainer": e["KUEUE_TRAINER"],
        "kustomize": e["KVERS"].split(),
        "go": e["GOVERSION"],
    },
}
with open(os.path.join(e["TMP"], "paths.json"), "w") as f:
    json.dump(paths, f, indent=2)
    f.write("\n")
EOF
# A folder of builds only ever holds complete builds: if another `make cluster` finished the same one
# first, keep that one (its binaries may be running) and drop ours.
if mv -T "${tmp}" "${out}" 2>/dev/null; then
  trap - EXIT
else
  step "another make cluster built ${key} first: keeping it"
fi
point_current
# Keep the three most recently used builds (another checkout may still use an older one).
ls -1dt "${cache_root}"/k8s-* | tail -n +4 | while read -r old; do
  [ "${old}" = "${out}" ] || { chmod -R u+w "${old}"; rm -rf "${old}"; }
done
step "built ${out}"
