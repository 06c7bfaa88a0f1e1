"""What the policy rules share: where a value of the pods came from (the TrainJob field that set it,
else ``spec.runtimeRef``), the container or pod it belongs to, and which values exceed a cap."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from ..kube.podmath import Section
from ..kube.quantity import Quantity
from ..report.explain import DEFAULTED_FROM_LIMITS, RUNTIME_REF_PATH, SECTIONS, ContainerView, JobView, Value
from ..values.violations import Violation
from .namespace_objects import LIMIT_RANGE

LIMIT_RANGE_SOURCE = f"{LIMIT_RANGE} "


def where(job: JobView, c: ContainerView) -> str:
    return f"{c.role} {c.name!r} of replicated job {job.name!r}"


def container_path(c: ContainerView, section: Section, name: str) -> str:
    """The TrainJob field that set the value; for a missing value, the one that sized the container."""
    value = c.section(section).get(name)
    if value is None:
        return c.resources_path or RUNTIME_REF_PATH
    return value.path or RUNTIME_REF_PATH


def job_path(job: JobView, section: Section, name: str) -> str:
    """The TrainJob field behind a pod's value: the largest value the TrainJob sets among the
    containers that run at the pod's peak for that resource; else ``spec.runtimeRef``."""
    pod_level = job.pod.requests if section == "requests" else job.pod.limits
    if name in pod_level or (section == "requests" and name in job.pod.limits):
        return RUNTIME_REF_PATH
    set_here = [
        value
        for c in peak_phase(job, section, name)
        if (value := c.section(section).get(name)) is not None and value.path is not None
    ]
    if not set_here:
        return RUNTIME_REF_PATH
    return max(set_here, key=lambda v: v.quantity).path or RUNTIME_REF_PATH


def peak_phase(job: JobView, section: Section, name: str) -> list[ContainerView]:
    """The containers running together when the pod needs the most of ``name`` (KEP-753's phases)."""
    zero = Quantity(0)
    sidecars: list[ContainerView] = []
    phases: list[list[ContainerView]] = []
    for c in job.containers:
        if c.container_list != "initContainers":
            continue
        if c.role == "sidecar":
            sidecars.append(c)
            phases.append(list(sidecars))
        else:
            phases.append([*sidecars, c])
    phases.append([*sidecars, *(c for c in job.containers if c.container_list == "containers")])

    def amount(phase: list[ContainerView]) -> Quantity:
        return sum((c.section(section)[name].quantity for c in phase if name in c.section(section)), zero)

    return max(reversed(phases), key=amount)


def above(c: ContainerView, caps: Mapping[str, Quantity]) -> Iterator[tuple[Section, str, Value, Quantity]]:
    """The container's values above ``caps``; a request defaulted from its limit is the limit's."""
    for section in SECTIONS:
        for name, value in sorted(c.section(section).items()):
            cap = caps.get(name)
            if cap is not None and value.quantity > cap and value.source != DEFAULTED_FROM_LIMITS:
                yield section, name, value, cap


def above_cap(path: str, what: str, value: Value, cap: str) -> Violation:
    return Violation(path, f"{what} is above {cap}", current_value=value.quantity.canonical())


def set_here(c: ContainerView, name: str) -> bool:
    """Whether the TrainJob or the runtime sets ``name`` for the container (a request or a limit)."""
    values = [c.section(section).get(name) for section in SECTIONS]
    return any(v is not None and not v.source.startswith(LIMIT_RANGE_SOURCE) for v in values)
