"""What a TrainJob will really ask for: every container's effective resources and where each value
came from, every pod by Kubernetes' formula, the pods per replicated job, and the TrainJob's total.

The same numbers serve ``trainjob-resources explain`` (rendered here as a table, markdown or JSON),
the namespace and platform policy, and the one-line summary result. Pure: nothing here reads or
writes files.
"""

from __future__ import annotations

import json
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
from ..trainer.effective import PER_NODE_SOURCE, RUNTIME_SOURCE, Effective, Source, effective_resources, start
from ..trainer.runtime_view import ContainerInfo, ContainerList, JobInfo
from ..trainer.sites import ContainerSite
from ..trainer.topology import Topology, pod_count, topology
from ..trainer.trainjob_view import TrainJobView, resources_per_node
from ..values import fieldpath
from ..values.keys import CONTAINER_LISTS
from ..values.records import MutableRecord, Record
from ..values.text import bounded, code_span, json_text, markdown_name, markdown_text
from ..values.violations import Violation
from .bundle import RuntimeEntry
from .context import TrainJobContext

RUNTIME_REF_PATH = "spec.runtimeRef"
RUNTIME_NAME_PATH = "spec.runtimeRef.name"
NUM_NODES_PATH = "spec.trainer.numNodes"
DEFAULTED_FROM_LIMITS = "defaulted from limits"
SECTIONS: tuple[Section, Section] = ("requests", "limits")


class Value(Record):
    __slots__ = ("path", "quantity", "source")

    def __init__(self, quantity: Quantity, source: str, path: str | None = None) -> None:
        self.quantity: Final = quantity
        # runtime, patch <manager>, resourcesPerNode, defaulted from limits, LimitRange <ns>/<name>
        self.source: Final = source
        self.path: Final = path  # the TrainJob field that set it; None when it is not the TrainJob's


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
            view.section(section)[name] = Value(quantity, _label(source), path)
    for name, limit in view.limits.items():
        if name not in view.requests:
            view.requests[name] = Value(limit.quantity, DEFAULTED_FROM_LIMITS, limit.path)
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


# Rendering


def to_json(views: Sequence[TrainJobPods], left_out: Sequence[LeftOut] = ()) -> dict[str, Any]:
    out: dict[str, Any] = {"trainJobs": [trainjob_json(v) for v in views]}
    if left_out:
        out["notExplained"] = [{"name": t.name, "namespace": t.namespace, "reason": t.reason} for t in left_out]
    return out


def render_json(views: Sequence[TrainJobPods], left_out: Sequence[LeftOut] = ()) -> str:
    """``to_json`` as indented JSON, written a TrainJob at a time (``json_entry``): the text of
    ``json.dumps(to_json(...), indent=2)`` without the whole document as Python objects first."""
    lines = ['{\n  "trainJobs": [']
    lines.append(",".join(json_entry(v) for v in views) + ("\n  ]" if views else "]"))
    if left_out:
        rest = {"notExplained": [{"name": t.name, "namespace": t.namespace, "reason": t.reason} for t in left_out]}
        lines.append(",\n  " + json.dumps(rest, indent=2, ensure_ascii=False)[4:-2])
    return json_text("".join(lines) + "\n}\n")


def json_entry(view: TrainJobPods) -> str:
    """One TrainJob's explanation as ``render_json`` writes it in its ``trainJobs`` list (on a line
    of its own, indented, without the comma before it)."""
    return "\n    " + json.dumps(trainjob_json(view), indent=2, ensure_ascii=False).replace("\n", "\n    ")


def left_out_text(views: Sequence[TrainJobPods], left_out: Sequence[LeftOut], none: str, markdown: bool = False) -> str:
    """What to say about the TrainJobs not shown, and when nothing is shown at all; each name and
    reason escaped (a refused TrainJob's name is the user's, whatever it holds)."""
    if not left_out:
        return "" if views else none
    count = len(left_out)
    lead = (
        f"No TrainJob could be explained ({count} in the input):"
        if not views
        else f"{count} more TrainJob{'s' if count != 1 else ''} not explained:"
    )
    if markdown:
        lines = (f"- {markdown_name(t.display, False)}: {markdown_text(t.reason, 4000)}\n" for t in left_out)
        return lead + "\n" + "".join(lines)
    return lead + "\n" + "".join(f"- {bounded(t.display)}: {bounded(t.reason, 4000)}\n" for t in left_out)


def trainjob_json(view: TrainJobPods) -> dict[str, Any]:
    return {
        "name": view.name,
        "namespace": view.namespace,
        "runtime": {"kind": view.runtime_kind, "name": view.runtime_name},
        "replicatedJobs": [
            {
                "name": job.name,
                "pods": job.pods,
                "podRequests": _canonical(job.pod_requests),
                "podLimits": _bounded(job.pod_limits, job.unbounded),
                "unboundedLimits": sorted(job.unbounded),
                "containers": [
                    {
                        "name": c.name,
                        "role": c.role,
                        "requests": _canonical(c.quantities("requests")),
                        "limits": _canonical(c.quantities("limits")),
                        "sources": {
                            section: {n: c.section(section)[n].source for n in sorted(c.section(section))}
                            for section in SECTIONS
                        },
                        **({"claims": c.claims} if c.claims else {}),
                        **({"claimsDroppedByResourcesPerNode": c.dropped_claims} if c.dropped_claims else {}),
                    }
                    for c in job.containers
                ],
            }
            for job in view.jobs
        ],
        "totalRequests": _canonical(view.total_requests),
        "totalLimits": _bounded(view.total_limits, view.unbounded),
        "unboundedLimits": sorted(view.unbounded),
    }


def _bounded(limits: Mapping[str, Quantity], unbounded: frozenset[str]) -> dict[str, str]:
    return _canonical({name: q for name, q in limits.items() if name not in unbounded})


def _canonical(values: Mapping[str, Quantity]) -> dict[str, str]:
    return {name: values[name].canonical() for name in sorted(values)}


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


def _source_text(container: ContainerView, name: str) -> str:
    request, limit = container.requests.get(name), container.limits.get(name)
    if request is not None and limit is not None:
        if request.source == DEFAULTED_FROM_LIMITS:
            return f"{limit.source} (request defaulted from the limit)"
        if request.source == limit.source:
            return request.source
        return f"request: {request.source}; limit: {limit.source}"
    if request is not None:
        return f"request: {request.source}"
    return f"limit: {limit.source}" if limit is not None else ""


POD_RESOURCES_LABEL = "(pod resources)"
POD_RESOURCES_SOURCE = "runtime (pod-level resources)"
OVERHEAD_LABEL = "(overhead)"
OVERHEAD_SOURCE = "runtime (overhead: added to the requests, and to the limits that are set)"


def render_table(views: Sequence[TrainJobPods], left_out: Sequence[LeftOut] = ()) -> str:
    """A plain-text table per TrainJob: one row per container and resource, each pod, and the total."""
    blocks: list[str] = []
    for view in views:
        rows = [["REPLICATED JOB", "PODS", "CONTAINER", "ROLE", "RESOURCE", "REQUEST", "LIMIT", "SOURCE"]]
        for job in view.jobs:
            block: list[list[str]] = []
            for c in job.containers:
                block += _rows(c.name, c.role, c.quantities("requests"), c.quantities("limits"), c)
            if job.pod.requests or job.pod.limits:
                block += _rows(POD_RESOURCES_LABEL, "", job.pod.requests, job.pod.limits, POD_RESOURCES_SOURCE)
            if job.pod.overhead:
                block += _rows(OVERHEAD_LABEL, "", job.pod.overhead, {}, OVERHEAD_SOURCE)
            block += _rows("= per pod", "", job.pod_requests, job.pod_limits, "", job.unbounded)
            block[0][:2] = [bounded(job.name), str(job.pods)]
            rows += block
        total = _rows("= pods x pod", "", view.total_requests, view.total_limits, "", view.unbounded)
        total[0][:2] = ["TOTAL", str(view.pods)]
        title = f"TrainJob {bounded(view.display)} (runtime {bounded(view.runtime_kind)} {bounded(view.runtime_name)})"
        blocks.append(title + "\n\n" + _align(rows + total))
    tail = left_out_text(views, left_out, "no TrainJobs\n")
    return "\n".join([*blocks, tail] if tail and blocks else blocks) if blocks else tail


def _rows(
    label: str,
    role: str,
    requests: Mapping[str, Quantity],
    limits: Mapping[str, Quantity],
    source: ContainerView | str,
    unbounded: frozenset[str] = frozenset(),
) -> list[list[str]]:
    rows = []
    for i, name in enumerate(sorted({*requests, *limits, *unbounded}) or ["-"]):
        limit = UNBOUNDED if name in unbounded else limits[name].canonical() if name in limits else "-"
        rows.append(
            [
                "",
                "",
                bounded(label) if i == 0 else "",
                role if i == 0 else "",
                bounded(name),
                requests[name].canonical() if name in requests else "-",
                limit,
                bounded(_source_text(source, name))
                if isinstance(source, ContainerView)
                else source
                if name != "-"
                else "",
            ]
        )
    return rows


def _align(rows: list[list[str]]) -> str:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "".join(
        "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() + "\n" for row in rows
    )


def render_markdown(views: Sequence[TrainJobPods], left_out: Sequence[LeftOut] = ()) -> str:
    """Markdown for a pull-request comment: one table per TrainJob, one row per container."""
    blocks: list[str] = []
    for view in views:
        lines = [
            f"### TrainJob {code_span(view.display)}",
            "",
            f"Runtime: {markdown_text(view.runtime_kind)} {code_span(view.runtime_name)}",
            "",
            "| replicated job | pods | container | role | requests | limits | set by |",
            "| --- | ---: | --- | --- | --- | --- | --- |",
        ]
        for job in view.jobs:
            first_row = len(lines)
            for i, container in enumerate(job.containers):
                lines.append(
                    _md_row(
                        markdown_name(job.name) if i == 0 else "",
                        str(job.pods) if i == 0 else "",
                        markdown_name(container.name),
                        container.role,
                        markdown_text(listing(container.quantities("requests")), 4000),
                        markdown_text(listing(container.quantities("limits")), 4000),
                        _md_sources(container),
                    )
                )
            extra = []
            if job.pod.requests or job.pod.limits:
                extra.append((POD_RESOURCES_LABEL, job.pod.requests, job.pod.limits, POD_RESOURCES_SOURCE))
            if job.pod.overhead:
                extra.append((OVERHEAD_LABEL, job.pod.overhead, {}, OVERHEAD_SOURCE))
            for label, requests, limits, source in extra:
                lead = (markdown_name(job.name), str(job.pods)) if len(lines) == first_row else ("", "")
                cells = (markdown_text(label), "", _md_listing(requests), _md_listing(limits), markdown_text(source))
                lines.append(_md_row(*lead, *cells))
            lead = (markdown_name(job.name), str(job.pods)) if len(lines) == first_row else ("", "")
            lines.append(
                _md_row(
                    *lead,
                    "**per pod**",
                    "",
                    f"**{_md_listing(job.pod_requests)}**",
                    f"**{_md_listing(job.pod_limits, job.unbounded)}**",
                    "",
                )
            )
        lines.append(
            _md_row(
                "**total**",
                f"**{view.pods}**",
                "",
                "",
                f"**{_md_listing(view.total_requests)}**",
                f"**{_md_listing(view.total_limits, view.unbounded)}**",
                "",
            )
        )
        blocks.append("\n".join(lines) + "\n")
    tail = left_out_text(views, left_out, "No TrainJobs.\n", markdown=True)
    return "\n".join([*blocks, tail] if tail and blocks else blocks) if blocks else tail


def _md_row(*cells: str) -> str:
    """One table row of cells already escaped (``markdown_text``, ``markdown_name``) or of this module's own markup."""
    return "| " + " | ".join(cells) + " |"


def _md_listing(values: Mapping[str, Quantity], unbounded: frozenset[str] = frozenset()) -> str:
    return markdown_text(listing(values, unbounded=unbounded), 4000)


def _md_sources(container: ContainerView) -> str:
    """Which fields each source set: a whole section by name when one source set all of it."""
    by_source: dict[str, list[str]] = {}
    for section in SECTIONS:
        values = container.section(section)
        sources = {v.source for v in values.values()}
        if len(sources) == 1:
            by_source.setdefault(sources.pop(), []).append(section)
            continue
        for name in sorted(values):
            by_source.setdefault(values[name].source, []).append(f"{section}.{name}")
    ordered = sorted(by_source.items(), key=lambda pair: pair[0] == DEFAULTED_FROM_LIMITS)
    return "; ".join(f"{_md_source(source)}: {markdown_text(', '.join(fields), 4000)}" for source, fields in ordered)


def _md_source(source: str) -> str:
    for prefix in ("patch ", "LimitRange "):
        if source.startswith(prefix):
            return f"{prefix}{code_span(source.removeprefix(prefix), table=True)}"
    return markdown_text(source)
