"""What a TrainJob will really ask for: every container's effective resources and where each value
came from, every pod by Kubernetes' formula, the pods per replicated job, and the TrainJob's total.

The same numbers serve ``trainjob-resources explain`` (rendered by ``explain_report``),
the namespace and platform policy, and the one-line summary result. Pure: nothing here reads or
writes files.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any, Final

from ..krm.resource_list import ResourceRef, Result
from ..kube.podmath import (
    ContainerResources,
    PodResources,
    Quantities,
    Section,
    add,
    pod_limits,
    pod_requests,
    scale,
)
from ..kube.quantity import Quantity, QuantityError, invalid, parse_quantity
from ..resolve.bundle import RuntimeEntry
from ..resolve.context import TrainJobContext
from ..trainer.effective import PER_NODE_SOURCE, RUNTIME_SOURCE, Effective, Source, effective_resources, start
from ..trainer.runtime_view import ContainerInfo, ContainerList, JobInfo
from ..trainer.sites import ContainerSite
from ..trainer.topology import Topology, pod_count, topology
from ..trainer.trainjob_view import TrainJobView, resources_per_node
from ..values import fieldpath
from ..values.keys import CONTAINER_LISTS
from ..values.records import MutableRecord, Record
from ..values.violations import Violation

RUNTIME_REF_PATH = "spec.runtimeRef"
RUNTIME_NAME_PATH = "spec.runtimeRef.name"
NUM_NODES_PATH = "spec.trainer.numNodes"
DEFAULTED_FROM_LIMITS = "defaulted from limits"
SECTIONS: tuple[Section, Section] = ("requests", "limits")


class Value(Record):
    __slots__ = ("path", "quantity", "source", "written")

    def __init__(self, quantity: Quantity, source: str, path: str | None = None, written: object = None) -> None:
        self.quantity: Final = quantity
        # runtime, patch <manager>, resourcesPerNode, defaulted from limits, LimitRange <ns>/<name>
        self.source: Final = source
        self.path: Final = path  # the TrainJob field that set it; None when it is not the TrainJob's
        # the value as the runtime or the TrainJob wrote it (``16384Mi``, ``2``: the object read, shared,
        # not a text made per value); None for a LimitRange's
        self.written: Final = written

    @property
    def text(self) -> str:
        """As written where it was, else in canonical form."""
        return str(self.written) if self.written is not None else self.quantity.canonical()


class ContainerDefaults(Record):
    """The values a LimitRange's Container items make admission fill in where a container has none."""

    __slots__ = ("limits", "origins", "requests", "source")

    def __init__(
        self,
        source: str,
        requests: Mapping[str, Quantity],
        limits: Mapping[str, Quantity],
        origins: Mapping[tuple[str, str], str] | None = None,
    ) -> None:
        self.source: Final = source  # "LimitRange team-a/caps"
        self.requests: Final = requests
        self.limits: Final = limits
        # (section, resource) -> the LimitRange field the API server defaulted it from, where that is
        # not default/defaultRequest itself ("max", "min", "default": policy._default_origins)
        self.origins: Final = dict(origins or {})

    def source_of(self, section: str, name: str) -> str:
        """``LimitRange team-a/caps``, or ``LimitRange team-a/caps (max)`` where the API server took the
        default from another field of the item (a limit or request from ``max``, a request from the
        ``default`` limit or from ``min``): a request that is the namespace's max says so."""
        origin = self.origins.get((section, name))
        return f"{self.source} ({origin})" if origin else self.source


class ContainerView(MutableRecord):
    __slots__ = (
        "claims",
        "container_list",
        "dropped_claims",
        "index",
        "limits",
        "name",
        "requests",
        "resources_path",
        "role",
    )

    def __init__(self, name: str, container_list: ContainerList, index: int, role: str) -> None:
        self.name = name
        self.container_list = container_list
        self.index = index
        self.role = role
        self.requests: dict[str, Value] = {}
        self.limits: dict[str, Value] = {}
        self.resources_path: str | None = None  # the last TrainJob field that sized this container
        self.claims: list[str] = []  # the container's effective claims, by name
        self.dropped_claims: list[str] = []  # dropped by upstream under resourcesPerNode (newRuntimeInfo)

    def section(self, section: Section) -> dict[str, Value]:
        return self.requests if section == "requests" else self.limits

    def quantities(self, section: Section) -> Quantities:
        return {name: value.quantity for name, value in self.section(section).items()}

    def resources(self) -> ContainerResources:
        restartable = self.role == "sidecar"
        return ContainerResources(self.name, self.quantities("requests"), self.quantities("limits"), restartable)


class JobView(MutableRecord):
    __slots__ = ("containers", "index", "name", "pod", "pod_limits", "pod_requests", "pod_spec", "pods", "unbounded")

    def __init__(self, parts: _JobParts, pods: int) -> None:
        job_model, info, containers, pod, pod_requests, pod_limits = parts
        self.name: str = job_model.name
        self.index: int = info.index
        self.pods = pods
        self.containers = containers
        self.pod = pod
        self.pod_requests = pod_requests
        self.pod_limits = pod_limits
        # the template's other pod fields (priorityClassName, activeDeadlineSeconds, ...)
        self.pod_spec: Mapping[str, Any] = job_model.pod_spec
        # Resources the pod has no limit for: some container in the sum sets none (pod_limits then
        # holds the sum of the others, which bounds nothing).
        self.unbounded: frozenset[str] = unbounded_limits(pod)


def unbounded_limits(pod: PodResources) -> frozenset[str]:
    """The resources some container of the pod requests or limits whose pod limit is not bounded:
    another container has no limit for it, and the pod sets no pod-level limit for it. Only the
    resources a container without a limit may use beyond its request (cpu, memory,
    ephemeral-storage): an extended resource or hugepages unrequested is none at all."""
    containers = [*pod.init_containers, *pod.containers]
    used = {n for c in containers for n in (*c.requests, *c.limits) if "/" not in n and not n.startswith("hugepages-")}
    return frozenset(name for name in used if name not in pod.limits and any(name not in c.limits for c in containers))


class TrainJobPods(MutableRecord):
    __slots__ = (
        "jobs",
        "name",
        "namespace",
        "problems",
        "runtime_kind",
        "runtime_name",
        "total_limits",
        "total_requests",
    )

    def __init__(
        self,
        name: str,
        namespace: str,
        runtime_kind: str,
        runtime_name: str,
        jobs: list[JobView],
        problems: list[Violation] | None = None,  # values that could not be read
    ) -> None:
        self.name = name
        self.namespace = namespace
        self.runtime_kind = runtime_kind
        self.runtime_name = runtime_name
        self.jobs = jobs
        self.total_requests: Quantities = {}
        self.total_limits: Quantities = {}
        for job in jobs:
            self.total_requests = add(self.total_requests, scale(job.pod_requests, job.pods))
            self.total_limits = add(self.total_limits, scale(job.pod_limits, job.pods))
        self.problems = [] if problems is None else problems

    @property
    def display(self) -> str:
        return f"{self.namespace}/{self.name}" if self.namespace else self.name

    @property
    def pods(self) -> int:
        return sum(job.pods for job in self.jobs)

    @property
    def unbounded(self) -> frozenset[str]:
        """Resources the TrainJob's total limit does not bound: a pod that runs has none for them."""
        return frozenset(name for job in self.jobs if job.pods for name in job.unbounded)


# A replicated job: the runtime's job, its info, its containers, its pod, the pod's requests and limits.
_JobParts = tuple[Any, JobInfo, list[ContainerView], PodResources, Quantities, Quantities]


class PodParts(Record):
    """What a TrainJob's pods are, job by job, apart from how many there are: TrainJobs that differ
    in ``numNodes`` alone share it (``Reuse``)."""

    __slots__ = ("jobs", "problems", "topo")

    def __init__(self, topo: Topology, jobs: list[_JobParts], problems: list[Violation]) -> None:
        self.topo: Final = topo
        self.jobs: Final = jobs
        self.problems: Final = problems


# Where a caller keeps PodParts between TrainJobs: its store, and the key of this TrainJob's parts
# (what they read: the runtime, the namespace's defaults, the topology, resourcesPerNode and the
# patches' resources, where they are and what they say).
Reuse = tuple[dict[Any, PodParts], Any]


def pod_parts(
    trainjob: TrainJobView,
    entry: RuntimeEntry,
    sites: Sequence[ContainerSite],
    defaults: Sequence[ContainerDefaults] = (),
    mode: str = "materialize",
    per_node_replaces: bool = False,
) -> PodParts:
    assert entry.model is not None
    per_node = resources_per_node(trainjob)
    topo = topology(entry.model, trainjob, sites)
    effective = effective_resources(
        entry.jobs, sites, per_node, topo, native=mode == "native", per_node_replaces=per_node_replaces
    )
    problems: list[Violation] = []
    jobs: list[_JobParts] = []
    for job_model in entry.model.replicated_jobs:
        info = entry.jobs.get(job_model.name)
        if info is None:
            continue
        containers = [
            _container(effective.get((info.name, c.container_list, c.name)) or start(c), c, defaults, problems)
            for c in _in_pod_order(info, topo)
        ]
        pod_fields = job_model.pod_spec
        pod = PodResources(
            init_containers=[c.resources() for c in containers if c.container_list == "initContainers"],
            containers=[c.resources() for c in containers if c.container_list == "containers"],
            requests=_pod_level(pod_fields.get("resources"), "requests", job_model.name, problems),
            limits=_pod_level(pod_fields.get("resources"), "limits", job_model.name, problems),
            overhead=_quantities(pod_fields.get("overhead"), f"replicated job {job_model.name!r} overhead", problems),
        )
        jobs.append((job_model, info, containers, pod, pod_requests(pod), pod_limits(pod)))
    return PodParts(topo, jobs, problems)


def explain_trainjob(
    context: TrainJobContext, defaults: Sequence[ContainerDefaults] = (), reuse: Reuse | None = None
) -> TrainJobPods:
    """The pods a valid TrainJob makes, container by container (``defaults``: the namespace's LimitRanges;
    the mode decides which patches stay on the TrainJob, and so reorder containers, see ``topology``)."""
    trainjob, entry, sites, mode = context.trainjob, context.runtime, context.sites, context.config.mode
    assert entry.model is not None
    parts = reuse[0].get(reuse[1]) if reuse is not None else None
    if parts is None:
        parts = pod_parts(trainjob, entry, sites, defaults, mode, context.release.per_node_replaces)
        if reuse is not None:
            reuse[0][reuse[1]] = parts
    jobs = [JobView(one, pod_count(parts.topo, entry.model, trainjob, one[0].name)) for one in parts.jobs]
    return TrainJobPods(
        trainjob.metadata.name,
        context.namespace,
        entry.item.kind,
        entry.cluster_name,  # a kustomize-renamed local-config copy's name is not the cluster's
        jobs,
        list(parts.problems),
    )


def _in_pod_order(info: JobInfo, topo: Topology) -> list[ContainerInfo]:
    """The job's containers in the order the patched pod lists them (``topology``)."""
    out: list[ContainerInfo] = []
    for list_name in CONTAINER_LISTS:
        listed = {name: c for (lst, name), c in info.containers.items() if lst == list_name}
        out += [listed[name] for name in topo.order(info.name, list_name, list(listed)) if name in listed]
    return out


def _container(
    effective: Effective, info: ContainerInfo, defaults: Sequence[ContainerDefaults], problems: list[Violation]
) -> ContainerView:
    patched = [s.path for s in effective.patched_by if s.path]
    view = ContainerView(info.name, info.container_list, info.index, info.role)
    view.resources_path = patched[-1] if patched else None
    claims = effective.requirements.get("claims")
    view.claims = [str(c.get("name")) for c in claims if isinstance(c, Mapping)] if isinstance(claims, list) else []
    view.dropped_claims = list(effective.dropped_claims)
    for section in SECTIONS:
        values = effective.requirements.get(section)
        for name, raw in values.items() if isinstance(values, Mapping) else ():
            source = effective.source_of(section, name)
            path = _value_path(source, section, name)
            try:
                quantity = _parse(raw)
            except QuantityError as err:
                where = f"{info.role} {info.name!r} of replicated job {info.job!r}"
                problems.append(
                    Violation(
                        path or RUNTIME_REF_PATH,
                        f"{section}.{name} of {where} is left out of every total: {invalid(raw, err)[0]}",
                        "warning",
                        current_value=raw,
                    )
                )
                continue
            view.section(section)[name] = Value(quantity, _label(source), path, raw)
    for name, limit in view.limits.items():
        if name not in view.requests:
            view.requests[name] = Value(limit.quantity, DEFAULTED_FROM_LIMITS, limit.path, limit.written)
    for default in defaults:
        for name, quantity in default.limits.items():
            view.limits.setdefault(name, Value(quantity, default.source_of("limits", name)))
        for name, quantity in default.requests.items():
            view.requests.setdefault(name, Value(quantity, default.source_of("requests", name)))
    return view


def _parse(raw: Any) -> Quantity:
    try:
        return _parse_hashable(raw)
    except TypeError:  # not hashable: not a quantity either, parse_quantity says why
        return parse_quantity(raw)


# The same few spellings recur across thousands of TrainJobs; a Quantity is immutable.
_parse_hashable = lru_cache(maxsize=4096, typed=True)(parse_quantity)


def _label(source: Source) -> str:
    if source.label in (RUNTIME_SOURCE, PER_NODE_SOURCE):
        return source.label
    return f"patch {source.label}"


def _value_path(source: Source, section: str, name: str) -> str | None:
    if source.path is None:
        return None
    return fieldpath.child(fieldpath.child(source.path, section), name)


def _pod_level(resources: Any, section: str, job: str, problems: list[Violation]) -> Quantities:
    values = resources.get(section) if isinstance(resources, Mapping) else None
    return _quantities(values, f"replicated job {job!r} pod-level resources.{section}", problems)


def _quantities(values: Any, what: str, problems: list[Violation]) -> Quantities:
    out: Quantities = {}
    for name, raw in values.items() if isinstance(values, Mapping) else ():
        try:
            out[str(name)] = _parse(raw)
        except QuantityError as err:
            problems.append(
                Violation(
                    RUNTIME_REF_PATH,
                    f"{what} {name} is left out: {invalid(raw, err)[0]}",
                    "warning",
                    current_value=raw,
                )
            )
    return out


class LeftOut(Record):
    """A TrainJob ``explain`` cannot show, and why."""

    __slots__ = ("name", "namespace", "reason")

    def __init__(self, name: str, namespace: str, reason: str) -> None:
        self.name: Final = name
        self.namespace: Final = namespace
        self.reason: Final = reason

    @property
    def display(self) -> str:
        return f"{self.namespace}/{self.name}" if self.namespace else self.name


def left_out(
    shown: Sequence[ResourceRef], trainjobs: Sequence[ResourceRef], results: Sequence[Result]
) -> list[LeftOut]:
    """The TrainJobs of the input that are not shown, each with the reason the function's results give."""
    seen = set(shown)
    out: list[LeftOut] = []
    for ref in trainjobs:
        if ref in seen:
            continue
        own = [r for r in results if r.resource_ref == ref]
        errors = [r for r in own if r.severity == "error"]
        if errors:
            plural = "s" if len(errors) != 1 else ""
            reason = f"{len(errors)} error{plural} (on stderr)"
        elif any(r.field_path == RUNTIME_NAME_PATH for r in own):
            reason = "its runtime is not in the input (supply it to see the numbers: --runtimes PATH)"
        else:
            reason = "its runtime is not in the input, or it cannot be read as a TrainJob"
        out.append(LeftOut(ref.name, ref.namespace, reason))
    return out


UNBOUNDED = "unbounded"


def listing(values: Mapping[str, Quantity], separator: str = ", ", unbounded: frozenset[str] = frozenset()) -> str:
    names = sorted({*values, *unbounded})
    return (
        separator.join(f"{name} {UNBOUNDED if name in unbounded else values[name].canonical()}" for name in names)
        or "none"
    )


def summary(view: TrainJobPods) -> str:
    """One line for the function's info result: requests per pod of each replicated job, and in total."""
    jobs = "; ".join(
        f"{job.name}: {job.pods} pod{'s' if job.pods != 1 else ''} x ({listing(job.pod_requests)})" for job in view.jobs
    )
    return f"requests per pod: {jobs or 'no replicated jobs'}; total requests: {listing(view.total_requests)}"
