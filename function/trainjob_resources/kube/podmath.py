"""A Pod's effective requests and limits, as Kubernetes computes them for scheduling, quota and LimitRange.

A port of ``PodRequests``/``PodLimits`` of k8s.io/component-helpers/resource (spec only, no status):

- the regular containers run together, so their values add up;
- init containers run one at a time before them; a native sidecar (an init container with
  ``restartPolicy: Always``, KEP-753) keeps running once started, so it adds to every init container
  that starts after it and to the regular containers; the pod needs the largest of these phases;
- pod-level ``resources`` (KEP-2837) replace the aggregate for the resources they support
  (cpu, memory, hugepages-*), and ``overhead`` (RuntimeClass) is added: to every request, and to
  the limits that are set and non-zero.

Values are per resource name: there is no "largest container" across resources.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Final, Literal

from ..values.records import Record
from .quantity import Quantity

Section = Literal["requests", "limits"]
# A resource list as Kubernetes means it (core/v1 ResourceList): quantities by resource name; not
# the KRM ResourceList (krm/resource_list.py).
Quantities = dict[str, Quantity]

HUGEPAGES_PREFIX = "hugepages-"


class ContainerResources(Record):
    """One container's requests and limits, as the API server stores them (requests defaulted)."""

    __slots__ = ("limits", "name", "requests", "restartable")

    def __init__(
        self,
        name: str,
        requests: Mapping[str, Quantity] | None = None,
        limits: Mapping[str, Quantity] | None = None,
        restartable: bool = False,  # an init container with restartPolicy: Always (a native sidecar)
    ) -> None:
        self.name: Final = name
        self.requests: Final[Mapping[str, Quantity]] = {} if requests is None else requests
        self.limits: Final[Mapping[str, Quantity]] = {} if limits is None else limits
        self.restartable: Final = restartable

    def section(self, section: Section) -> Mapping[str, Quantity]:
        return self.requests if section == "requests" else self.limits


class PodResources(Record):
    __slots__ = ("containers", "init_containers", "limits", "overhead", "requests")

    def __init__(
        self,
        init_containers: Sequence[ContainerResources] = (),
        containers: Sequence[ContainerResources] = (),
        requests: Mapping[str, Quantity] | None = None,  # pod-level spec.resources
        limits: Mapping[str, Quantity] | None = None,
        overhead: Mapping[str, Quantity] | None = None,
    ) -> None:
        self.init_containers: Final = init_containers
        self.containers: Final = containers
        self.requests: Final[Mapping[str, Quantity]] = {} if requests is None else requests
        self.limits: Final[Mapping[str, Quantity]] = {} if limits is None else limits
        self.overhead: Final[Mapping[str, Quantity]] = {} if overhead is None else overhead


def is_pod_level_resource(name: str) -> bool:
    """component-helpers' ``IsSupportedPodLevelResource``."""
    return name in ("cpu", "memory") or name.startswith(HUGEPAGES_PREFIX)


def is_limit_ranger_pod_level_resource(name: str) -> bool:
    """The LimitRanger's own copy of that rule, which knows only cpu and memory."""
    return name in ("cpu", "memory")


def add(base: Mapping[str, Quantity], other: Mapping[str, Quantity]) -> Quantities:
    """``addResourceList``: the sum per resource name (a name in one list only is copied)."""
    out = dict(base)
    for name, quantity in other.items():
        out[name] = out[name] + quantity if name in out else quantity
    return out


def maximum(base: Mapping[str, Quantity], other: Mapping[str, Quantity]) -> Quantities:
    """``maxResourceList``: the larger value per resource name."""
    out = dict(base)
    for name, quantity in other.items():
        if name not in out or quantity > out[name]:
            out[name] = quantity
    return out


def scale(values: Mapping[str, Quantity], factor: int) -> Quantities:
    return {name: quantity * factor for name, quantity in values.items()}


def total(lists: Iterable[Mapping[str, Quantity]]) -> Quantities:
    out: Quantities = {}
    for values in lists:
        out = add(out, values)
    return out


def aggregate(pod: PodResources, section: Section) -> Quantities:
    """``AggregateContainerRequests``/``AggregateContainerLimits``: containers only, KEP-753's formula."""
    result = total(c.section(section) for c in pod.containers)
    sidecars: Quantities = {}
    init_peak: Quantities = {}
    for container in pod.init_containers:
        values = container.section(section)
        if container.restartable:
            result = add(result, values)
            sidecars = add(sidecars, values)
            phase = sidecars
        else:
            phase = add(values, sidecars)
        init_peak = maximum(init_peak, phase)
    return maximum(result, init_peak)


def pod_requests(
    pod: PodResources,
    *,
    overhead: bool = True,
    pod_level: Callable[[str], bool] = is_pod_level_resource,
) -> Quantities:
    """``PodRequests``. The LimitRanger calls its copy without overhead and with its own ``pod_level``."""
    requests = aggregate(pod, "requests")
    requests.update({n: q for n, q in defaulted_pod_level_requests(pod, requests).items() if pod_level(n)})
    if overhead:
        requests = add(requests, pod.overhead)
    return requests


def pod_limits(
    pod: PodResources,
    *,
    overhead: bool = True,
    pod_level: Callable[[str], bool] = is_pod_level_resource,
) -> Quantities:
    """``PodLimits``: overhead is added only to limits that are set and non-zero."""
    limits = aggregate(pod, "limits")
    if any(pod_level(n) for n in (*pod.requests, *pod.limits)):
        limits.update({n: q for n, q in pod.limits.items() if pod_level(n)})
    if overhead:
        for name, quantity in pod.overhead.items():
            if name in limits and not limits[name].is_zero():
                limits[name] = limits[name] + quantity
    return limits


def defaulted_pod_level_requests(pod: PodResources, aggregated: Mapping[str, Quantity]) -> Quantities:
    """Pod-level requests after the API server's defaulting (``defaultPodRequests``).

    A resource with a pod-level limit and no pod-level request gets the containers' aggregate
    request when they have one and it may be overcommitted (cpu, memory: hugepages may not), else
    the pod-level limit (k8s.io/kubernetes ``pkg/apis/core/v1/defaults.go``).
    """
    requests = dict(pod.requests)
    for name, limit in pod.limits.items():
        if name not in requests and is_pod_level_resource(name):
            requests[name] = aggregated.get(name, limit) if name in ("cpu", "memory") else limit
    return requests


def canonical(values: Mapping[str, Quantity]) -> dict[str, str]:
    """Kubernetes' canonical spelling of every value, by resource name."""
    return {name: values[name].canonical() for name in sorted(values)}
