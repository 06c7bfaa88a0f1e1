"""Pod-level ``spec.resources`` (KEP-2837, beta and on by default since Kubernetes 1.34) against the
containers' resources once every patch is merged: what the API server refuses of every Pod the
JobSet creates, said at the TrainJob field that set the offending value.

Upstream: k8s.io/kubernetes ``pkg/apis/core/validation/validation.go`` (``validatePodResources``,
``validatePodResourceConsistency``, ``validateResourceRequirements``), after the Pod's defaulting
(``pkg/apis/core/v1/defaults.go``: ``SetDefaults_Pod`` copies container limits to missing requests,
then ``defaultPodRequests`` fills missing pod-level cpu and memory requests with the aggregate), with the aggregate of
k8s.io/component-helpers ``resource/helpers.go`` (``AggregateContainerRequests``/``Limits``,
``kube/podmath.py``):

- each regular container's limit must not exceed the pod-level limit (init containers and sidecars
  are not compared one by one);
- the containers' aggregate request must not exceed an explicit pod-level request;
- where the pod-level request is missing, defaulting sets it to that aggregate (cpu, memory), which
  must then not exceed the pod-level limit;
- the containers' aggregate hugepages limit must not exceed the pod-level one.

A value that came from the runtime alone is the runtime's problem, not the TrainJob's: only pods
where a TrainJob value takes part are reported. A Windows pod (``os.name: windows``) may not set
pod-level resources at all; the runtime says so itself, so it is left alone here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..kube.podmath import HUGEPAGES_PREFIX, Section, aggregate
from ..kube.quantity import Quantity
from ..report.explain import ContainerView, pod_parts
from ..resolve.context import TrainJobContext
from ..values.violations import Violation
from .framework import Rule
from .reads import CONTAINER_SITES, MODE, PATCHED_RESOURCES, RESOURCES_PER_NODE, RUNTIME, TOPOLOGY, TRAINER_VERSION
from .stages import PATCHES

_REFUSED = "the API server refuses every Pod of it"
# defaultPodRequests: the resources a missing pod-level request defaults to the containers' aggregate
# for (supported at pod level and overcommittable).
_DEFAULTED = ("cpu", "memory")


def _has_pod_level(job: Any) -> bool:
    resources = job.pod_spec.get("resources")
    os = job.pod_spec.get("os")
    windows = isinstance(os, Mapping) and os.get("name") == "windows"
    return isinstance(resources, Mapping) and bool(resources.get("requests") or resources.get("limits")) and not windows


def _check(context: TrainJobContext, _: Any) -> list[Violation]:
    model = context.runtime.model
    if model is None or not any(_has_pod_level(job) for job in model.replicated_jobs):
        return []
    if not context.patched_sites and context.per_node is None:
        return []
    parts = pod_parts(
        context.trainjob, context.runtime, context.sites, (), context.config.mode, context.release.per_node_replaces
    )
    out: list[Violation] = []
    for job_model, _info, containers, pod, _requests, _limits in parts.jobs:
        if _has_pod_level(job_model):
            out += _job(job_model.name, containers, pod)
    return out


def _first_path(containers: Sequence[ContainerView], section: Section, name: str) -> str | None:
    """The TrainJob field of the first container value that takes part in the pod's aggregate."""
    return next((v.path for c in containers if (v := c.section(section).get(name)) and v.path), None)


def _job(job: str, containers: Sequence[ContainerView], pod: Any) -> list[Violation]:
    out: list[Violation] = []
    where = f"replicated job {job!r}"
    for container in containers:
        if container.container_list != "containers":
            continue
        for name, value in container.limits.items():
            cap = pod.limits.get(name)
            if value.path and cap is not None and value.quantity > cap:
                out.append(
                    Violation(
                        value.path,
                        f"limits.{name} {value.quantity.canonical()} of container {container.name!r} of {where} "
                        f"is above the runtime's pod-level limit of {cap.canonical()} (spec.resources.limits.{name}): "
                        f"must be less than or equal to pod limits of {cap.canonical()}; {_REFUSED}",
                        current_value=value.quantity.canonical(),
                        proposed_value=cap.canonical(),
                    )
                )
    for name, total in aggregate(pod, "requests").items():
        path = _first_path(containers, "requests", name)
        explicit, cap = pod.requests.get(name), pod.limits.get(name)
        if path is None:
            continue
        if explicit is not None and total > explicit:
            against = _pod_value("request", "requests", name, explicit)
            out.append(_aggregate(path, where, "requests", name, total, against))
        elif explicit is None and name in _DEFAULTED and cap is not None and total > cap:
            # defaultPodRequests sets the missing pod-level request to the aggregate, which then
            # exceeds the pod-level limit (validateResourceRequirements).
            against = _pod_value("limit", "limits", name, cap) + " (the pod-level request, not set, defaults to them)"
            out.append(_aggregate(path, where, "requests", name, total, against))
    for name, total in aggregate(pod, "limits").items():
        path = _first_path(containers, "limits", name)
        cap = pod.limits.get(name)
        if name.startswith(HUGEPAGES_PREFIX) and cap is not None and path is not None and total > cap:
            out.append(_aggregate(path, where, "limits", name, total, _pod_value("limit", "limits", name, cap)))
    return out


def _pod_value(what: str, section: str, name: str, value: Quantity) -> str:
    return f"the runtime's pod-level {what} of {value.canonical()} (spec.resources.{section}.{name})"


def _aggregate(path: str, where: str, section: Section, name: str, total: Quantity, against: str) -> Violation:
    verb = section.removesuffix("s")
    return Violation(
        path,
        f"the containers of {where} {verb} {total.canonical()} of {name} together (Kubernetes' aggregate "
        f"{section}: init containers and sidecars included), above {against}; {_REFUSED}",
    )


RULE = Rule(
    "pod-level-resources",
    (PATCHES,),
    "trainjob",
    (RUNTIME, MODE, TRAINER_VERSION, CONTAINER_SITES, PATCHED_RESOURCES, RESOURCES_PER_NODE, TOPOLOGY),
    "container resources the runtime's pod-level resources refuse",
    _check,
)
