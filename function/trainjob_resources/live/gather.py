"""What ``check`` reads of the cluster for one render, call by call: list calls per kind and
namespace (TrainJobs of every namespace at once when a derived ClusterTrainingRuntime is live, whose
users may be anywhere), three CRDs by name and Trainer's public ConfigMap, and one
SelfSubjectAccessReview per verb, kind and namespace of what the sync applies or prunes. Never a GET
per object of the render.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import yaml

from ..trainer.api import RUNTIME_KINDS, TRAINER_GROUP, TRAINJOB_KIND
from .findings import (
    Denial,
    Live,
    Render,
    RuntimeKey,
    base_refs,
    crd_name,
    is_derived,
    is_trainer,
    labels_of,
    name_of,
    namespace_of,
    runtime_key,
    runtime_ref,
    starting,
)
from .in_use import pruned
from .kueue_release import CRD as KUEUE_CRD
from .kueue_release import kueue_release
from .kueue_usage import reserved
from .queues import KUEUE_GROUP, KUEUE_VERSIONS, KueueObjects, queue_name

if TYPE_CHECKING:
    from .cluster import Cluster

TRAINER_VERSION = "v1alpha1"
SNAPSHOT_SUFFIX = "-runtime-snapshot"  # pkg/runtime/core/snapshot.go: runtimeSnapshotSuffix, data key "runtime"
SNAPSHOT_KEY = "runtime"
# Where a Trainer install says its release. Its CRDs carry none in v2.3.0 (manifests/base/crds and the
# chart's templates/crd: only controller-gen's annotation), but a CRD labelled by another installer
# may: the recommended label (charts/kubeflow-trainer/templates/_helpers.tpl gives it to the rest).
VERSION_KEYS = ("app.kubernetes.io/version",)
# The release Trainer publishes for its SDK: ConfigMap kubeflow-trainer-public, data
# kubeflow_trainer_version, in Trainer's namespace, readable by every authenticated user
# (manifests/overlays/manager/kustomization.yaml, manifests/base/rbac/public_configmap_role.yaml and its binding).
PUBLIC_CONFIGMAP = "kubeflow-trainer-public"
PUBLIC_VERSION_KEY = "kubeflow_trainer_version"
TRAINER_NAMESPACE = "kubeflow-system"
_RELEASE = re.compile(r"^v?\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.-]+)?$")


def _trainer_path(resource: str, namespace: str = "") -> str:
    scope = f"/namespaces/{namespace}" if namespace else ""
    return f"/apis/{TRAINER_GROUP}/{TRAINER_VERSION}{scope}/{resource}"


def _core_path(resource: str, namespace: str) -> str:
    return f"/api/v1/namespaces/{namespace}/{resource}"


def namespaces(objects: Iterable[Mapping[str, Any]]) -> set[str]:
    return {ns for ns in (namespace_of(o) for o in objects) if ns}


def read(cluster: Cluster, objects: Sequence[Mapping[str, Any]], trainer_namespace: str = TRAINER_NAMESPACE) -> Live:
    """The live objects a sync of ``objects`` meets."""
    live = Live()
    spaces = sorted(namespaces(objects))
    for runtime in cluster.list_objects(_trainer_path("clustertrainingruntimes")):
        live.runtimes[runtime_key(runtime)] = runtime
    # TrainJobs of every namespace only when a derived ClusterTrainingRuntime is live: the sync may prune
    # it, and its users may be anywhere (runtime-in-use); else those of the render's namespaces.
    everywhere = any(is_derived(r) for r in live.runtimes.values())
    paths = [_trainer_path("trainjobs")] if everywhere else [_trainer_path("trainjobs", ns) for ns in spaces]
    paths += [_trainer_path("trainingruntimes", ns) for ns in spaces]
    paths += [_core_path("resourcequotas", ns) for ns in spaces]
    for path, found in zip(paths, cluster.lists(paths), strict=True):
        if path.endswith("/trainjobs"):
            live.trainjobs += found
        elif path.endswith("/trainingruntimes"):
            live.runtimes.update((runtime_key(r), r) for r in found)
        else:
            live.quotas += found
    for kind in (TRAINJOB_KIND, *RUNTIME_KINDS):
        crd = cluster.get(f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{crd_name(kind)}")
        if crd is not None:
            live.crds[crd_name(kind)] = crd
    live.trainer = trainer_release(live.crds)
    if live.trainer[0] is None and live.crds:
        public, note = cluster.try_get(_core_path("configmaps", trainer_namespace) + f"/{PUBLIC_CONFIGMAP}")
        live.trainer = published_release(
            public, f"ConfigMap {trainer_namespace}/{PUBLIC_CONFIGMAP}", note, live.trainer[1]
        )
    live.kueue = kueue_objects(cluster, starting(Render([dict(o) for o in objects], [], {}), live, kueue_served=True))
    with_trainjobs = sorted(namespaces(live.trainjobs) & set(spaces))
    names = {f"{namespace_of(t)}/{name_of(t)}{SNAPSHOT_SUFFIX}" for t in live.trainjobs}
    parsed: dict[str, Any] = {}  # TrainJobs started on the same runtime content share one snapshot text
    for ns, configmaps in zip(
        with_trainjobs, cluster.lists([_core_path("configmaps", ns) for ns in with_trainjobs]), strict=True
    ):
        for cm in configmaps:
            key = f"{ns}/{name_of(cm)}"
            if key in names:
                live.snapshots[key.removesuffix(SNAPSHOT_SUFFIX)] = _snapshot(cm, parsed)
    return live


def kueue_objects(cluster: Cluster, trainjobs: Sequence[Mapping[str, Any]]) -> KueueObjects:
    """Kueue's LocalQueues (in the namespaces of the queued TrainJobs the sync starts), ClusterQueues,
    ResourceFlavors and what the Workloads of every namespace reserve (``kueue_usage``: one list call), in the
    newest version the cluster serves, and the Kueue release (``kueue_release``);
    nothing when no such TrainJob is queued or Kueue is not installed (the label then does nothing)."""
    spaces = sorted({namespace_of(t) for t in trainjobs if queue_name(t) is not None})
    if not spaces:
        return KueueObjects()
    served = [v for v in KUEUE_VERSIONS if "ClusterQueue" in cluster.resources(f"{KUEUE_GROUP}/{v}")]
    if not served:
        return KueueObjects()
    version = served[0]
    kueue = KueueObjects(version)
    crd, _ = cluster.try_get(f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{KUEUE_CRD}")
    kueue.release = kueue_release(crd, served)
    base = f"/apis/{KUEUE_GROUP}/{version}"
    paths = [f"{base}/clusterqueues", f"{base}/resourceflavors", f"{base}/workloads"]
    paths += [f"{base}/namespaces/{ns}/localqueues" for ns in spaces]
    cluster_queues, flavors, workloads, *local_queues = cluster.lists(paths)
    kueue.cluster_queues = {name_of(q): q for q in cluster_queues}
    kueue.reserved = reserved(workloads)
    kueue.flavors = {name_of(f): f for f in flavors}
    kueue.local_queues = {f"{namespace_of(q)}/{name_of(q)}": q for found in local_queues for q in found}
    return kueue


def _snapshot(configmap: Mapping[str, Any], parsed: dict[str, Any]) -> Any:
    data = configmap.get("data")
    text = data.get(SNAPSHOT_KEY) if isinstance(data, Mapping) else None
    if not isinstance(text, str):
        return None
    if text not in parsed:
        try:
            parsed[text] = yaml.load(text, Loader=yaml.CSafeLoader)  # Trainer's own YAML (sigs.k8s.io/yaml)
        except yaml.YAMLError:
            parsed[text] = None
    return parsed[text]


def runtime_classes(cluster: Cluster, names: Iterable[str]) -> dict[str, dict[str, Any]]:
    """The cluster's RuntimeClasses (node.k8s.io/v1), by name, when the pods name some; else none read."""
    wanted = set(names)
    if not wanted:
        return {}
    return {
        name_of(rc): rc for rc in cluster.list_objects("/apis/node.k8s.io/v1/runtimeclasses") if name_of(rc) in wanted
    }


def limit_ranges(cluster: Cluster, spaces: Iterable[str]) -> list[dict[str, Any]]:
    return [lr for found in cluster.lists([_core_path("limitranges", ns) for ns in sorted(spaces)]) for lr in found]


def trainer_release(crds: Mapping[str, Mapping[str, Any]]) -> tuple[str | None, str]:
    """The Trainer release the CRDs name (a version label or annotation), and what was read to tell it."""
    if not crds:
        return None, f"no Trainer CRD is installed ({crd_name(TRAINJOB_KIND)} not found)"
    seen: dict[str, None] = {}
    for name in sorted(crds):
        meta = crds[name].get("metadata") or {}
        for where in ("labels", "annotations"):
            values = meta.get(where) or {}
            for key in VERSION_KEYS:
                value = values.get(key)
                if isinstance(value, str) and _RELEASE.match(value):
                    release = value if value.startswith("v") else f"v{value}"
                    return release, f"CRD {name} {where[:-1]} {key}: {value}"
            seen.update((f"{k}: {v}", None) for k, v in values.items() if "last-applied" not in k)
    carried = "; ".join(seen) or "none"
    return None, f"the {len(crds)} Trainer CRDs carry no release label or annotation (theirs: {carried})"


def published_release(public: Mapping[str, Any] | None, where: str, note: str, crds: str) -> tuple[str | None, str]:
    data = public.get("data") if public is not None else None
    value = data.get(PUBLIC_VERSION_KEY) if isinstance(data, Mapping) else None
    if isinstance(value, str) and _RELEASE.match(value):
        return (value if value.startswith("v") else f"v{value}"), f"{where} data {PUBLIC_VERSION_KEY}: {value}"
    said = f"{PUBLIC_VERSION_KEY}: {value!r}" if public is not None else note
    return None, f"{crds}; {where}: {said}"


def platform_runtimes(live: Live, objects: Sequence[Mapping[str, Any]], have: set[RuntimeKey]) -> list[dict[str, Any]]:
    """The installed runtimes the render needs and does not have: those its TrainJobs name (as written
    or as the function recorded) and its derived runtimes were made from. A derived runtime on the
    cluster is never one: the render makes its own."""
    wanted: list[RuntimeKey] = []
    for obj in objects:
        if is_trainer(obj, (TRAINJOB_KIND,)):
            ref = runtime_ref(obj)
            if ref is not None and ref.group == TRAINER_GROUP:
                wanted.append(ref.key(namespace_of(obj) or ""))
        if is_trainer(obj, (TRAINJOB_KIND, *RUNTIME_KINDS)):
            wanted += base_refs(obj)
    out = []
    for key in dict.fromkeys(wanted):
        runtime = live.runtimes.get(key)
        if runtime is None or key in have or is_derived(runtime):
            continue
        out.append(as_copy(runtime))
        have.add(key)
    return out


def as_copy(obj: Mapping[str, Any]) -> dict[str, Any]:
    """An installed runtime as the render reads a copy: identity, labels, annotations and spec."""
    meta = obj.get("metadata") or {}
    metadata: dict[str, Any] = {"name": name_of(obj)}
    if namespace_of(obj):
        metadata["namespace"] = namespace_of(obj)
    if labels_of(obj):
        metadata["labels"] = dict(labels_of(obj))
    annotations = {k: v for k, v in (meta.get("annotations") or {}).items() if "last-applied" not in k}
    if annotations:
        metadata["annotations"] = annotations
    return {"apiVersion": obj.get("apiVersion"), "kind": obj.get("kind"), "metadata": metadata, "spec": obj.get("spec")}


def denials(cluster: Cluster, objects: Sequence[Mapping[str, Any]], live: Live, default_namespace: str) -> list[Denial]:
    """The SelfSubjectAccessReviews of the sync: get, create and patch of every kind and namespace it
    applies (server-side apply is a patch, and creates what is absent; a client-side apply, kubectl's
    and Argo CD's default, GETs each object first), delete of the derived runtimes it prunes (live,
    derived, in its namespaces, not in the render)."""
    asked: dict[tuple[str, str, str, str, str], list[str]] = {}  # (verb, group, resource, kind, ns): names
    discovered: dict[str, dict[str, tuple[str, bool]]] = {}

    def add(verb: str, obj: Mapping[str, Any]) -> None:
        version = str(obj.get("apiVersion") or "")
        if version not in discovered:
            discovered[version] = cluster.resources(version)
        kind = str(obj.get("kind") or "")
        found = discovered[version].get(kind)
        if found is None:
            return  # a kind the cluster does not serve: the sync fails on it anyway, with its own message
        resource, namespaced = found
        group = version.split("/", 1)[0] if "/" in version else ""
        ns = (namespace_of(obj) or default_namespace) if namespaced else ""
        asked.setdefault((verb, group, resource, kind, ns), []).append(name_of(obj))

    for obj in objects:
        for verb in ("get", "create", "patch"):
            add(verb, obj)
    for runtime in pruned(Render([dict(o) for o in objects], [], {}), live).values():
        add("delete", runtime)
    out = []
    answers = cluster.reviews([(verb, group, resource, ns) for verb, group, resource, _, ns in asked])
    for ((verb, group, resource, kind, ns), names), (allowed, reason) in zip(asked.items(), answers, strict=True):
        if not allowed:
            out.append(Denial(verb, kind, f"{resource}.{group}" if group else resource, ns, names, reason))
    return out
