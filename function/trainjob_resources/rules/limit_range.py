"""A ``LimitRange`` in the TrainJob's namespace, as the LimitRanger admission plugin runs it
(plugin/pkg/admission/limitranger/admission.go): its Container items (min, max,
maxLimitRequestRatio) on every container and init container, its Pod items on every pod
(Kubernetes' pod formula, as the LimitRanger runs it: without overhead), and a default limit below
a container's request (the API server would reject the pod). Its messages are the LimitRanger's.
Severity: ``namespacePolicy``."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from decimal import MAX_EMAX, MIN_EMIN, Context, Decimal, localcontext
from typing import Any

from ..kube.podmath import Section, is_limit_ranger_pod_level_resource, pod_limits, pod_requests
from ..kube.quantity import Quantity
from ..report.explain import RUNTIME_REF_PATH, ContainerView, JobView, TrainJobPods
from ..resolve.context import TrainJobContext
from ..values.violations import Violation
from .framework import Rule
from .namespace_objects import LimitItem, LimitRange
from .policy_math import LIMIT_RANGE_SOURCE, container_path, job_path, where
from .policy_pods import POLICY_READS, namespace_findings, pods_of
from .stages import POLICY


def _check(context: TrainJobContext, _: Any) -> list[Violation]:
    if context.config.namespace_policy == "off":
        return []
    pods = pods_of(context)
    return namespace_findings(context, pods, limit_range_violations(pods.view, pods.limit_ranges))


def limit_range_violations(view: TrainJobPods, limit_ranges: Iterable[LimitRange]) -> list[Violation]:
    out: list[Violation] = []
    for limit_range in limit_ranges:
        for item in limit_range.items:
            if item.type == "Container":
                for job in view.jobs:
                    for container in job.containers:
                        out += _container_limits(limit_range, item, job, container)
            elif item.type == "Pod":
                for job in view.jobs:
                    out += _pod_limits(limit_range, item, job)
    for job in view.jobs:
        for container in job.containers:
            out += _defaulted_below_request(job, container)
    return out


Finding = tuple[str, Section, Quantity | None]  # message, the section at fault, its value


def _constraints(
    kind: str, item: LimitItem, requests: Mapping[str, Quantity], limits: Mapping[str, Quantity]
) -> list[tuple[str, Finding]]:
    """The LimitRanger's min, max and maxLimitRequestRatio checks, with its messages; (resource, finding)."""
    out: list[tuple[str, Finding]] = []
    for name, enforced in item.min.items():
        request, limit = requests.get(name), limits.get(name)
        bound = f"minimum {name} usage per {kind} is {enforced.canonical()}"
        if request is None:
            out.append((name, (f"{bound}. No request is specified", "requests", None)))
        elif enforced > request:
            out.append((name, (f"{bound}, but request is {request.canonical()}", "requests", request)))
        elif limit is not None and enforced > limit:
            out.append((name, (f"{bound}, but limit is {limit.canonical()}", "limits", limit)))
    for name, enforced in item.max.items():
        request, limit = requests.get(name), limits.get(name)
        bound = f"maximum {name} usage per {kind} is {enforced.canonical()}"
        if limit is None:
            out.append((name, (f"{bound}. No limit is specified", "limits", None)))
        elif limit > enforced:
            out.append((name, (f"{bound}, but limit is {limit.canonical()}", "limits", limit)))
        elif request is not None and request > enforced:
            out.append((name, (f"{bound}, but request is {request.canonical()}", "requests", request)))
    for name, ratio in item.max_limit_request_ratio.items():
        request, limit = requests.get(name), limits.get(name)
        bound = f"{name} max limit to request ratio per {kind} is {ratio.canonical()}"
        if request is None or request.is_zero():
            out.append((name, (f"{bound}, but no request is specified or request is 0", "requests", request)))
        elif limit is None or limit.is_zero():
            out.append((name, (f"{bound}, but no limit is specified or limit is 0", "limits", limit)))
        elif limit > Quantity(request.coefficient * ratio.coefficient, request.exponent + ratio.exponent):
            out.append((name, (f"{bound}, but provided ratio is {_ratio(limit, request)}", "limits", limit)))
    return out


def _ratio(limit: Quantity, request: Quantity) -> str:
    """limit / request to six decimals, as the LimitRanger prints it (in exponent form when huge)."""
    with localcontext(Context(prec=40, Emax=MAX_EMAX, Emin=MIN_EMIN)):
        ratio = abs(
            Decimal(limit.coefficient).scaleb(limit.exponent) / Decimal(request.coefficient).scaleb(request.exponent)
        )
        return f"{ratio:.6f}" if ratio.adjusted() < 30 else f"{ratio:.6e}"


def _container_limits(limit_range: LimitRange, item: LimitItem, job: JobView, c: ContainerView) -> list[Violation]:
    out = []
    requests, limits = c.quantities("requests"), c.quantities("limits")
    for name, (message, section, value) in _constraints("Container", item, requests, limits):
        own = c.section(section).get(name)
        origin = f"; the {section.removesuffix('s')} is from {own.source}" if own is not None else ""
        out.append(
            Violation(
                container_path(c, section, name),
                f"{limit_range.display}: {message} ({where(job, c)}{origin})",
                current_value=value.canonical() if value is not None else None,
            )
        )
    return out


def _pod_limits(limit_range: LimitRange, item: LimitItem, job: JobView) -> list[Violation]:
    out = []
    pod_level = is_limit_ranger_pod_level_resource
    requests = pod_requests(job.pod, overhead=False, pod_level=pod_level)
    limits = pod_limits(job.pod, overhead=False, pod_level=pod_level)
    for name, (message, section, value) in _constraints("Pod", item, requests, limits):
        out.append(
            Violation(
                job_path(job, section, name),
                f"{limit_range.display}: {message} (each pod of replicated job {job.name!r})",
                current_value=value.canonical() if value is not None else None,
            )
        )
    return out


def _defaulted_below_request(job: JobView, c: ContainerView) -> list[Violation]:
    out = []
    for name, limit in c.limits.items():
        request = c.requests.get(name)
        if request is None or not request.quantity > limit.quantity:
            continue
        if not (limit.source.startswith(LIMIT_RANGE_SOURCE) or request.source.startswith(LIMIT_RANGE_SOURCE)):
            continue
        out.append(
            Violation(
                request.path or c.resources_path or RUNTIME_REF_PATH,
                f"requests.{name} {request.quantity.canonical()} ({request.source}) is above limits.{name} "
                f"{limit.quantity.canonical()} ({limit.source}) once admission applies the namespace's defaults: "
                f"the API server would reject the pod ({where(job, c)}); set limits.{name} for this container",
                current_value=request.quantity.canonical(),
            )
        )
    return out


RULE = Rule(
    "limit-range",
    (POLICY,),
    "trainjob",
    POLICY_READS,
    "a LimitRange's min, max, maxLimitRequestRatio exceeded; a namespace default limit below a request",
    _check,
)
