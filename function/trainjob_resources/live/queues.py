"""``queue-exceeded``: what Kueue's scheduler does with the TrainJobs a sync starts in its queues.

Pure: Kueue's objects come in as the API server's JSON (``KueueObjects``), the TrainJobs' pods as
``explain`` counts them. A TrainJob labelled ``kueue.x-k8s.io/queue-name`` is suspended by Kueue's
webhook and admitted when its Workload fits: each pod set (a replicated job, ``count`` pods) takes,
for every resource group of the ClusterQueue it requests from, the first flavor in the group's order
whose nominal quota, less what is reserved (what the Workloads hold, ``kueue_usage``), holds the pod
set's requests
(sigs.k8s.io/kueue/pkg/scheduler/flavorassigner/flavorassigner.go at v0.17.0; a flavor whose node
labels contradict the pod's nodeSelector, or whose taints the pod does not tolerate, is passed over).
A resource no resource group covers makes the Workload inadmissible ("resource ... unavailable in
ClusterQueue"). TrainJobs on one ClusterQueue are taken in the render's order, each admitted one
reserving its quota for the next. Borrowing within a cohort is not predicted: for a ClusterQueue in a
cohort the finding is a warning. The pod sets are sized as the cluster's Kueue release does
(kueue_release.py), which ``kueue-release`` names.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

from ..kube.podmath import ContainerResources, PodResources, Quantities, pod_requests
from ..kube.quantity import Quantity, QuantityError, parse_quantity
from ..report.explain import DEFAULTED_FROM_LIMITS, ContainerView, JobView, TrainJobPods
from ..trainer.api import TRAINJOB_KIND
from ..values.records import MutableRecord
from .kueue_release import KueueRelease, followed
from .report import Finding, object_name

KUEUE_GROUP: Final = "kueue.x-k8s.io"
KUEUE_VERSIONS: Final = ("v1beta2", "v1beta1")  # v0.17.0 serves both (stores v1beta2); older ones v1beta1
QUEUE_LABEL: Final = "kueue.x-k8s.io/queue-name"  # Kueue's QueueLabel (its controller constants)
PODS: Final = "pods"  # counted only where a resource group covers it (one per pod)

Usage = dict[tuple[str, str], Quantity]  # (flavor, resource) -> quantity


class KueueObjects(MutableRecord):
    """What ``check`` read of Kueue: its queues and flavors, by name (``namespace/name`` for LocalQueues)."""

    __slots__ = ("cluster_queues", "flavors", "local_queues", "release", "reserved", "version")

    def __init__(self, version: str = "", release: KueueRelease | None = None) -> None:
        self.version = version  # the API version read; "" when Kueue is not served
        self.release = release or KueueRelease("v0.17.0", 17, "assumed")  # what sizes the pod sets
        self.local_queues: dict[str, dict[str, Any]] = {}
        self.cluster_queues: dict[str, dict[str, Any]] = {}
        self.flavors: dict[str, dict[str, Any]] = {}
        # per ClusterQueue, what its Workloads hold (kueue_usage.py); None: the Workloads were not read
        self.reserved: dict[str, Usage] | None = None


def _meta(obj: Mapping[str, Any], field: str) -> Any:
    meta = obj.get("metadata")
    return meta.get(field) if isinstance(meta, Mapping) else None


def queue_name(trainjob: Mapping[str, Any]) -> str | None:
    labels = _meta(trainjob, "labels")
    value = labels.get(QUEUE_LABEL) if isinstance(labels, Mapping) else None
    return value if isinstance(value, str) and value else None


def _spec(obj: Mapping[str, Any] | None) -> Mapping[str, Any]:
    spec = obj.get("spec") if obj is not None else None
    return spec if isinstance(spec, Mapping) else {}


def _quantity(value: Any) -> Quantity | None:
    try:
        return parse_quantity(value)
    except (QuantityError, TypeError):
        return None


class Group(MutableRecord):
    """One resource group of a ClusterQueue: the resources it covers and its flavors, in order."""

    __slots__ = ("covered", "flavors")

    def __init__(self, covered: frozenset[str], flavors: list[str]) -> None:
        self.covered = covered
        self.flavors = flavors


def _groups(cluster_queue: Mapping[str, Any]) -> tuple[list[Group], Usage]:
    groups, nominal = [], {}
    for group in _spec(cluster_queue).get("resourceGroups") or []:
        if not isinstance(group, Mapping):
            continue
        covered = frozenset(str(r) for r in group.get("coveredResources") or [])
        flavors = []
        for flavor in group.get("flavors") or []:
            if not isinstance(flavor, Mapping) or not isinstance(flavor.get("name"), str):
                continue
            flavors.append(flavor["name"])
            for resource in flavor.get("resources") or []:
                if isinstance(resource, Mapping):
                    quota = _quantity(resource.get("nominalQuota", 0))
                    nominal[(flavor["name"], str(resource.get("name")))] = quota or Quantity(0)
        groups.append(Group(covered, flavors))
    return groups, nominal


def _reserved(cluster_queue: Mapping[str, Any]) -> Usage:
    """The quota the ClusterQueue's status says its Workloads hold (``status.flavorsReservation``;
    ``flavorsUsage`` where a Kueue writes only that), which lags an admission: used only where the Workloads
    were not read (``kueue_usage``)."""
    status = cluster_queue.get("status")
    status = status if isinstance(status, Mapping) else {}
    rows = status.get("flavorsReservation") or status.get("flavorsUsage") or []
    out: Usage = {}
    for row in rows if isinstance(rows, list) else []:
        if not isinstance(row, Mapping):
            continue
        for resource in row.get("resources") or []:
            if isinstance(resource, Mapping):
                total = _quantity(resource.get("total", 0))
                if total is not None:
                    out[(str(row.get("name")), str(resource.get("name")))] = total
    return out


def _cohort(cluster_queue: Mapping[str, Any]) -> str:
    spec = _spec(cluster_queue)
    return str(spec.get("cohortName") or spec.get("cohort") or "")


def _tolerates(tolerations: Sequence[Any], taint: Mapping[str, Any]) -> bool:
    """k8s.io/api core/v1 Toleration.ToleratesTaint: key (empty with Exists: every key), value, effect."""
    for t in tolerations:
        if not isinstance(t, Mapping):
            continue
        if t.get("effect") and t.get("effect") != taint.get("effect"):
            continue
        if t.get("key") and t.get("key") != taint.get("key"):
            continue
        if t.get("operator") == "Exists" or (t.get("value") or "") == (taint.get("value") or ""):
            return True
    return False


def _flavor_fits_pod(flavor: Mapping[str, Any] | None, pod_spec: Mapping[str, Any]) -> bool:
    """The flavor's nodeLabels agree with the pod's nodeSelector, and the pod (with the flavor's own
    tolerations) tolerates every NoSchedule/NoExecute nodeTaint of it."""
    spec = _spec(flavor)
    labels = spec.get("nodeLabels") or {}
    selector = pod_spec.get("nodeSelector") or {}
    if (
        isinstance(labels, Mapping)
        and isinstance(selector, Mapping)
        and any(key in labels and labels[key] != value for key, value in selector.items())
    ):
        return False
    tolerations = [*(pod_spec.get("tolerations") or []), *(spec.get("tolerations") or [])]
    for taint in spec.get("nodeTaints") or []:
        blocking = isinstance(taint, Mapping) and taint.get("effect") in ("NoSchedule", "NoExecute")
        if blocking and not _tolerates(tolerations, taint):
            return False
    return True


PER_NODE: Final = "resourcesPerNode"


def _as_kueue_sizes(view: ContainerView) -> ContainerResources | None:
    """The container as Kueue through v0.19 sizes it, where that differs from the JobSet's: Kueue builds a
    Workload's pod sets with the Trainer its go.mod names (v2.2.0 for v0.17.0, v2.2.1 for v0.19.2), whose
    JobSet builder gives the trainer container ``resourcesPerNode`` as its whole resources
    (pkg/runtime/framework/plugins/jobset/builder.go at v2.2.x: ``WithResources(requirements)``),
    where v2.3.0 merges it per resource name. Seen on the control plane, on both: a runtime's 8Gi memory
    request is in the JobSet and not in the Workload. None: no value of the container came from
    resourcesPerNode."""
    requests, limits = view.requests, view.limits
    if not any(v.source == PER_NODE for v in (*requests.values(), *limits.values())):
        return None
    kept_limits = {n: v.quantity for n, v in limits.items() if v.source == PER_NODE}
    kept_requests = {n: v.quantity for n, v in requests.items() if v.source == PER_NODE}
    for name, q in kept_limits.items():  # the API server's defaulting (requests from limits)
        kept_requests.setdefault(name, q)
    for name, v in requests.items():
        if v.source not in (PER_NODE, DEFAULTED_FROM_LIMITS) and v.source.startswith("LimitRange"):
            kept_requests.setdefault(name, v.quantity)
    return ContainerResources(view.name, kept_requests, kept_limits, view.role == "sidecar")


def kueue_pod_requests(job: JobView, per_node_replaces: bool = True) -> Quantities:
    """One pod's requests as Kueue counts them: ``explain``'s, but for the trainer container under
    ``resourcesPerNode`` where the Kueue release replaces (``_as_kueue_sizes``; kueue_release.py)."""
    if not per_node_replaces:
        return dict(job.pod_requests)
    resized = {v.name: r for v in job.containers if (r := _as_kueue_sizes(v)) is not None}
    if not resized:
        return dict(job.pod_requests)
    pod = job.pod
    return pod_requests(
        PodResources(
            [resized.get(c.name, c) for c in pod.init_containers],
            [resized.get(c.name, c) for c in pod.containers],
            pod.requests,
            pod.limits,
            pod.overhead,
        )
    )


def _pod_set_requests(job: JobView, per_node_replaces: bool) -> dict[str, Quantity]:
    """The pod set's requests: ``count`` pods of the pod's requests (pods counted one each)."""
    requests = kueue_pod_requests(job, per_node_replaces)
    out = {name: q * job.pods for name, q in requests.items() if not q.is_zero()}
    out[PODS] = Quantity(job.pods)
    return out


class Shortfall(MutableRecord):
    """Why one pod set does not fit: per flavor tried, the resources it lacks (need, left, nominal, reserved)."""

    __slots__ = ("job", "lacking", "uncovered", "unsuited")

    def __init__(self, job: JobView) -> None:
        self.job = job
        self.uncovered: list[str] = []
        self.unsuited: list[str] = []  # resources whose group has no flavor the pod may run on
        self.lacking: list[tuple[str, str, Quantity, Quantity, Quantity, Quantity]] = []


def _assign(
    view: TrainJobPods,
    groups: list[Group],
    nominal: Usage,
    used: Usage,
    flavors: Mapping[str, Mapping[str, Any]],
    per_node_replaces: bool = True,
) -> tuple[Usage, list[Shortfall]]:
    """Kueue's flavor assignment of every pod set, first fit in each group's order; what it reserves."""
    taken: Usage = {}
    short: list[Shortfall] = []
    for job in view.jobs:
        if not job.pods:
            continue
        need = _pod_set_requests(job, per_node_replaces)
        missing = Shortfall(job)
        missing.uncovered = sorted(r for r in need if r != PODS and not any(r in g.covered for g in groups))
        for group in groups:
            wanted = sorted(r for r in need if r in group.covered)
            if not wanted:
                continue
            chosen = None
            tried = []
            for flavor in group.flavors:
                if not _flavor_fits_pod(flavors.get(flavor), job.pod_spec):
                    continue
                lacking = []
                for r in wanted:
                    quota = nominal.get((flavor, r), Quantity(0))
                    held = used.get((flavor, r), Quantity(0)) + taken.get((flavor, r), Quantity(0))
                    left = quota + held * -1 if quota > held else Quantity(0)
                    if need[r] > left:
                        lacking.append((flavor, r, need[r], left, quota, held))
                if not lacking:
                    chosen = flavor
                    break
                tried += lacking
            if chosen is None:
                missing.lacking += tried
                if not tried:
                    missing.unsuited += wanted
                continue
            for r in wanted:
                taken[(chosen, r)] = taken.get((chosen, r), Quantity(0)) + need[r]
        if missing.uncovered or missing.lacking or missing.unsuited:
            short.append(missing)
    return taken, short


def exceeded(
    trainjobs: Iterable[Mapping[str, Any]], views: Mapping[str, TrainJobPods], kueue: KueueObjects
) -> list[Finding]:
    """One finding per queued TrainJob the sync starts that Kueue will not admit as things stand."""
    if not kueue.version:
        return []
    used: dict[str, Usage] = {}
    out = []
    for trainjob in trainjobs:
        queue = queue_name(trainjob)
        if queue is None:
            continue
        namespace, name = str(_meta(trainjob, "namespace") or ""), str(_meta(trainjob, "name") or "")
        subject = object_name(TRAINJOB_KIND, namespace, name)
        local = kueue.local_queues.get(f"{namespace}/{queue}")
        if local is None:
            out.append(
                Finding(
                    "queue-exceeded",
                    "error",
                    subject,
                    f"is labelled {QUEUE_LABEL}: {queue}, and namespace {namespace} has no LocalQueue {queue}: "
                    "Kueue keeps the TrainJob suspended (its Workload is inadmissible). Create the LocalQueue, or "
                    "name one the namespace has",
                )
            )
            continue
        cq_name = str(_spec(local).get("clusterQueue") or "")
        cluster_queue = kueue.cluster_queues.get(cq_name)
        if cluster_queue is None:
            out.append(
                Finding(
                    "queue-exceeded",
                    "error",
                    subject,
                    f"its LocalQueue {namespace}/{queue} points at ClusterQueue {cq_name or '(none)'}, which the "
                    "cluster does not have: Kueue keeps the TrainJob suspended. Create the ClusterQueue",
                )
            )
            continue
        view = views.get(f"{namespace}/{name}")
        if view is None:
            continue
        groups, nominal = _groups(cluster_queue)
        counted = _reserved(cluster_queue) if kueue.reserved is None else dict(kueue.reserved.get(cq_name, {}))
        reserved = used.setdefault(cq_name, counted)
        replaces = kueue.release.per_node_replaces
        taken, short = _assign(view, groups, nominal, reserved, kueue.flavors, replaces)
        if not short:
            for key, q in taken.items():
                reserved[key] = reserved.get(key, Quantity(0)) + q
            continue
        cohort = _cohort(cluster_queue)
        out.append(
            Finding(
                "queue-exceeded",
                "warning" if cohort else "error",
                subject,
                _message(queue, namespace, cq_name, short, cohort),
            )
        )
    return out


def release_followed(
    trainjobs: Iterable[Mapping[str, Any]], views: Mapping[str, TrainJobPods], kueue: KueueObjects
) -> list[Finding]:
    """``kueue-release``, where ``exceeded`` sized a queued TrainJob's pod sets."""
    keys = (f"{_meta(t, 'namespace') or ''}/{_meta(t, 'name') or ''}" for t in trainjobs if queue_name(t))
    return [followed(kueue.release)] if kueue.version and any(k in views for k in keys) else []


def _message(queue: str, namespace: str, cq_name: str, short: list[Shortfall], cohort: str) -> str:
    parts = []
    for s in short:
        what = f"pod set {s.job.name} ({s.job.pods} pod{'s' if s.job.pods != 1 else ''})"
        if s.uncovered:
            parts.append(
                f"{what} requests {', '.join(s.uncovered)}, which no resource group of ClusterQueue {cq_name} covers"
            )
        if s.unsuited:
            parts.append(
                f"{what} requests {', '.join(s.unsuited)}, and no flavor that covers it suits the pod (its node "
                "labels contradict the pod's nodeSelector, or the pod does not tolerate its taints)"
            )
        lacks = [
            f"{r} {need.canonical()} where flavor {flavor} has {left.canonical()} left (nominal {quota.canonical()}, "
            f"reserved {held.canonical()})"
            for flavor, r, need, left, quota, held in s.lacking
        ]
        if lacks:
            parts.append(f"{what} needs {'; '.join(lacks)}")
    if cohort:
        outcome = (
            f"Kueue admits it only if it can borrow that from cohort {cohort}, else the TrainJob stays suspended "
            "until quota frees"
        )
    else:
        outcome = "Kueue does not admit it: the TrainJob stays suspended until quota frees"
    return (
        f"queued on {namespace}/{queue} (ClusterQueue {cq_name}): {'; '.join(parts)}. {outcome}. Lower the "
        "requests, raise the ClusterQueue's nominalQuota, or start fewer at once"
    )
