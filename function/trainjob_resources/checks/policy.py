"""Namespace policy (LimitRange, ResourceQuota) and the functionConfig's platform policy.

Called once per valid TrainJob, after patch validation, in every mode. Everything is checked on
the pods the TrainJob will make (``explain``): effective values after the API server's defaulting
(requests from limits) and the LimitRanger's (the namespace's ``default``/``defaultRequest``).

- A ``LimitRange`` in the TrainJob's namespace: its Container items (min, max,
  maxLimitRequestRatio) on every container and init container, its Pod items on every pod
  (Kubernetes' pod formula, as the LimitRanger runs it: without overhead), and a default limit
  below a container's request (the API server would reject the pod).
- A ``ResourceQuota`` in that namespace: what one TrainJob needs in total, all pods at once,
  against ``hard`` (it could never be admitted), and the rule that a quota on cpu or memory
  makes every container set that value. A quota whose scopes cannot be decided from the
  runtime's pod template (CrossNamespacePodAffinity, VolumeAttributesClass) is not checked.
- The functionConfig: ``maxPerContainer``, ``maxPerRole``, ``allowedResources``, ``allowGpuInSidecars``.
  ``maxPerRole`` caps a container by its role (``container_role``); both count every value that
  reaches the pod, a LimitRange's defaults included (the repository may ship the LimitRange).

Namespace findings have the severity ``namespacePolicy`` names (``off``: LimitRanges and
ResourceQuotas are ignored altogether); platform findings are errors. Each names the object and
points at the TrainJob field that set the value (a patch or resourcesPerNode), else at
``spec.runtimeRef``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from decimal import MAX_EMAX, MIN_EMIN, Context, Decimal, localcontext
from typing import Any, Final, TypeVar

from ..krm.resource_list import Item
from ..kube.podmath import Quantities, Section, is_limit_ranger_pod_level_resource, pod_limits, pod_requests
from ..kube.quantity import Quantity, QuantityError, parse_quantity
from ..kube.resource_rules import is_extended_resource_name
from ..trainer.runtime_view import TRAINER_ANCESTOR, TRAINER_CONTAINER
from ..trainer.topology import Topology
from ..trainer.trainjob_view import TrainJobView
from ..values.records import MutableRecord, Record
from ..values.violations import Violation
from .bundle import Bundle
from .context import TrainJobContext
from .explain import (
    DEFAULTED_FROM_LIMITS,
    NUM_NODES_PATH,
    RUNTIME_REF_PATH,
    SECTIONS,
    ContainerDefaults,
    ContainerView,
    JobView,
    Reuse,
    TrainJobPods,
    Value,
    explain_trainjob,
    summary,
)
from .options import Options

LIMIT_RANGE = "LimitRange"
RESOURCE_QUOTA = "ResourceQuota"
LIMIT_RANGE_SOURCE = f"{LIMIT_RANGE} "
UNTOTALLED = "the resources of this TrainJob's pods cannot be totalled exactly, so no policy was checked"
T = TypeVar("T")
_QUOTA_VALIDATED: dict[str, tuple[Section, str]] = {
    "cpu": ("requests", "cpu"),
    "requests.cpu": ("requests", "cpu"),
    "limits.cpu": ("limits", "cpu"),
    "memory": ("requests", "memory"),
    "requests.memory": ("requests", "memory"),
    "limits.memory": ("limits", "memory"),
}
_QOS_RESOURCES = ("cpu", "memory")


class _Unreadable(ValueError):
    pass


class LimitItem(Record):
    __slots__ = ("default", "default_request", "max", "max_limit_request_ratio", "min", "origins", "type")

    def __init__(
        self,
        type: str,
        min: Quantities,
        max: Quantities,
        max_limit_request_ratio: Quantities,
        default: Quantities,
        default_request: Quantities,
    ) -> None:
        """``default`` and ``default_request`` as written: a Container item is defaulted here as the
        API server does (``SetDefaults_LimitRangeItem``, pkg/apis/core/v1/defaults.go)."""
        self.type: Final = type
        self.min: Final = min
        self.max: Final = max
        self.max_limit_request_ratio: Final = max_limit_request_ratio
        # (section, resource) -> the field the defaulting took a default from, where it is not the
        # default's own field: "max" (a limit, or a request through it), "min", "default".
        self.origins: Final = _default_origins(min, max, default, default_request) if type == "Container" else {}
        if type == "Container":
            default = {**max, **default}
            default_request = {**min, **default, **default_request}
        self.default: Final = default
        self.default_request: Final = default_request


class LimitRange(Record):
    __slots__ = ("display", "items")

    def __init__(self, display: str, items: tuple[LimitItem, ...]) -> None:
        self.display: Final = display
        self.items: Final = items

    def container_defaults(self) -> ContainerDefaults:
        """The LimitRanger's ``defaultContainerResourceRequirements``: later Container items win per key."""
        requests: Quantities = {}
        limits: Quantities = {}
        origins: dict[tuple[str, str], str] = {}
        for item in self.items:
            if item.type == "Container":
                requests.update(item.default_request)
                limits.update(item.default)
                for section, values in (("requests", item.default_request), ("limits", item.default)):
                    for name in values:
                        origin = item.origins.get((section, name))
                        if origin is None:
                            origins.pop((section, name), None)
                        else:
                            origins[(section, name)] = origin
        return ContainerDefaults(self.display, requests, limits, origins)


class ScopeRequirement(Record):
    __slots__ = ("operator", "scope", "values")

    def __init__(self, scope: str, operator: str, values: tuple[str, ...] = ()) -> None:
        self.scope: Final = scope
        self.operator: Final = operator
        self.values: Final = values


class Quota(Record):
    __slots__ = ("display", "hard", "scopes")

    def __init__(self, display: str, hard: Quantities, scopes: tuple[ScopeRequirement, ...]) -> None:
        self.display: Final = display
        self.hard: Final = hard
        self.scopes: Final = scopes


class Assessment(MutableRecord):
    __slots__ = ("view", "violations")

    def __init__(self, view: TrainJobPods, violations: list[Violation]) -> None:
        self.view = view
        self.violations = violations


def evaluate(context: TrainJobContext, reuse: Reuse | None = None) -> list[Violation]:
    """Violations (errors, warnings) and the per-TrainJob resource summary (info); ``reuse``: see
    ``explain_trainjob``."""
    config, bundle, namespace = context.config, context.bundle, context.namespace
    try:
        assessment = assess(context, reuse)
    except QuantityError as err:
        if policy_set(config, bundle, namespace):
            # A check that cannot run is a check that did not pass: fail closed.
            return [Violation("", f"{UNTOTALLED}: {err}; the policy cannot be checked, so it is refused", "error")]
        return [Violation("", f"{UNTOTALLED}: {err}", "warning")]
    violations = assessment.violations
    if policy_set(config, bundle, namespace):
        violations = [_closed(v) for v in violations]
    return [*violations, Violation("", summary(assessment.view), "info")]


def policy_set(config: Options, bundle: Bundle, namespace: str) -> bool:
    """Whether a policy applies to the TrainJob: a platform option, or the namespace's LimitRanges
    and ResourceQuotas checked as errors."""
    if (
        config.max_per_container
        or config.max_per_role
        or config.allowed_resources is not None
        or not config.allow_gpu_in_sidecars
    ):
        return True
    if config.namespace_policy != "error":
        return False
    return any(bundle.namespace_policy(kind, namespace) for kind in (LIMIT_RANGE, RESOURCE_QUOTA))


def _closed(violation: Violation) -> Violation:
    """A value left out of the totals (it is no quantity this function reads) hides it from every
    check: an error while a policy applies."""
    if violation.severity != "warning" or " is left out" not in violation.message:
        return violation
    message = f"{violation.message}; the policy cannot be checked on it, so it is refused"
    return Violation(violation.path, message, "error", violation.current_value, violation.proposed_value)


def assess(context: TrainJobContext, reuse: Reuse | None = None) -> Assessment:
    """The TrainJob's pods (as ``explain`` shows them) and every policy finding about them."""
    config, bundle, namespace = context.config, context.bundle, context.namespace
    violations: list[Violation] = []
    limit_ranges: list[LimitRange] = []
    quotas: list[Quota] = []
    if config.namespace_policy != "off":
        for item in bundle.namespace_policy(LIMIT_RANGE, namespace):
            _read(item, read_limit_range, limit_ranges, violations)
        for item in bundle.namespace_policy(RESOURCE_QUOTA, namespace):
            _read(item, read_quota, quotas, violations)
    defaults = [lr.container_defaults() for lr in limit_ranges]
    view = explain_trainjob(context, defaults, reuse)
    violations += view.problems
    if config.namespace_policy != "off":
        found = limit_range_violations(view, limit_ranges) + quota_violations(view, quotas, context.trainjob)
        severity = config.namespace_policy
        violations += [Violation(v.path, v.message, severity, v.current_value, v.proposed_value) for v in found]
    violations += platform_violations(view, config)
    violations += role_violations(view, config, context.topo)
    return Assessment(view, violations)


def _read(item: Item, reader: Callable[[Item], T], into: list[T], violations: list[Violation]) -> None:
    try:
        into.append(reader(item))
    except _Unreadable as err:
        violations.append(Violation("", f"{item.ref.display()} cannot be read ({err}): it is not checked", "warning"))


# Reading the namespace's objects


def read_limit_range(item: Item) -> LimitRange:
    """A LimitRange with the API server's defaulting of its Container items (``SetDefaults_LimitRangeItem``)."""
    spec = item.value().get("spec")
    entries = spec.get("limits") if isinstance(spec, Mapping) else None
    if not isinstance(entries, list):
        raise _Unreadable("spec.limits must be a list")
    items: list[LimitItem] = []
    for i, entry in enumerate(entries):
        if not isinstance(entry, Mapping) or not isinstance(entry.get("type"), str):
            raise _Unreadable(f"spec.limits[{i}] must be a mapping with a type")
        where = f"spec.limits[{i}]"
        parsed = {
            key: _resource_list(entry.get(key), f"{where}.{key}")
            for key in ("min", "max", "maxLimitRequestRatio", "default", "defaultRequest")
        }
        items.append(
            LimitItem(
                entry["type"],
                parsed["min"],
                parsed["max"],
                parsed["maxLimitRequestRatio"],
                parsed["default"],
                parsed["defaultRequest"],
            )
        )
    return LimitRange(item.ref.display(), tuple(items))


def _default_origins(
    minimum: Quantities, maximum: Quantities, default: Quantities, default_request: Quantities
) -> dict[tuple[str, str], str]:
    """Where ``SetDefaults_LimitRangeItem`` (pkg/apis/core/v1/defaults.go) takes each default it fills
    in: an unset ``default`` from ``max``; an unset ``defaultRequest`` from ``default`` (itself
    perhaps from ``max``), else from ``min``."""
    out: dict[tuple[str, str], str] = {}
    for name in maximum:
        if name not in default:
            out[("limits", name)] = "max"
    for name in {**minimum, **maximum, **default}:
        if name in default_request:
            continue
        if name in default:
            out[("requests", name)] = "default"
        elif name in maximum:
            out[("requests", name)] = "max"
        else:
            out[("requests", name)] = "min"
    return out


def read_quota(item: Item) -> Quota:
    spec = item.value().get("spec")
    if not isinstance(spec, Mapping):
        raise _Unreadable("spec must be a mapping")
    hard = _resource_list(spec.get("hard"), "spec.hard")
    listed = spec.get("scopes")
    if listed is not None and not isinstance(listed, list):
        raise _Unreadable("spec.scopes must be a list")
    scopes = [ScopeRequirement(str(s), "Exists") for s in listed or []]
    selector = spec.get("scopeSelector")
    expressions = selector.get("matchExpressions") if isinstance(selector, Mapping) else None
    if expressions is not None and not isinstance(expressions, list):
        raise _Unreadable("spec.scopeSelector.matchExpressions must be a list")
    for expression in expressions or []:
        values = expression.get("values") if isinstance(expression, Mapping) else None
        if not isinstance(expression, Mapping) or not isinstance(values or [], list):
            raise _Unreadable("spec.scopeSelector.matchExpressions must hold mappings with a list of values")
        values = tuple(str(v) for v in values or [])
        scopes.append(ScopeRequirement(str(expression.get("scopeName")), str(expression.get("operator")), values))
    return Quota(item.ref.display(), hard, tuple(scopes))


def _resource_list(value: Any, where: str) -> Quantities:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise _Unreadable(f"{where} must be a mapping")
    out: Quantities = {}
    for name, raw in value.items():
        try:
            out[str(name)] = parse_quantity(raw)
        except QuantityError as err:
            raise _Unreadable(f"{where}.{name}: {err}") from None
    return out


# LimitRange


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
                _container_path(c, section, name),
                f"{limit_range.display}: {message} ({_where(job, c)}{origin})",
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
                _job_path(job, section, name),
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
                f"the API server would reject the pod ({_where(job, c)}); set limits.{name} for this container",
                current_value=request.quantity.canonical(),
            )
        )
    return out


def _where(job: JobView, c: ContainerView) -> str:
    return f"{c.role} {c.name!r} of replicated job {job.name!r}"


def _container_path(c: ContainerView, section: Section, name: str) -> str:
    """The TrainJob field that set the value; for a missing value, the one that sized the container."""
    value = c.section(section).get(name)
    if value is None:
        return c.resources_path or RUNTIME_REF_PATH
    return value.path or RUNTIME_REF_PATH


def _job_path(job: JobView, section: Section, name: str) -> str:
    """The TrainJob field behind a pod's value: the largest value the TrainJob sets among the
    containers that run at the pod's peak for that resource; else ``spec.runtimeRef``."""
    pod_level = job.pod.requests if section == "requests" else job.pod.limits
    if name in pod_level or (section == "requests" and name in job.pod.limits):
        return RUNTIME_REF_PATH
    set_here = [
        value
        for c in _peak_phase(job, section, name)
        if (value := c.section(section).get(name)) is not None and value.path is not None
    ]
    if not set_here:
        return RUNTIME_REF_PATH
    return max(set_here, key=lambda v: v.quantity).path or RUNTIME_REF_PATH


def _peak_phase(job: JobView, section: Section, name: str) -> list[ContainerView]:
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


# ResourceQuota


def pod_usage(requests: Mapping[str, Quantity], limits: Mapping[str, Quantity]) -> Quantities:
    """What one pod counts against a quota (the quota evaluator's ``podComputeUsageHelper``)."""
    usage: Quantities = {"pods": Quantity(1), "count/pods": Quantity(1)}
    for name in ("cpu", "memory", "ephemeral-storage"):
        if name in requests:
            usage[name] = usage[f"requests.{name}"] = requests[name]
        if name in limits:
            usage[f"limits.{name}"] = limits[name]
    for name, request in requests.items():
        if name.startswith("hugepages-"):
            usage[name] = usage[f"requests.{name}"] = request
        elif is_extended_resource_name(name):
            usage[f"requests.{name}"] = request
    return usage


def quota_violations(view: TrainJobPods, quotas: Iterable[Quota], trainjob: TrainJobView) -> list[Violation]:
    out: list[Violation] = []
    for quota in quotas:
        matches = [_scopes_match(quota, job) for job in view.jobs]
        if any(m is None for m in matches):
            continue
        jobs = [job for job, m in zip(view.jobs, matches, strict=True) if m]
        out += _quota_totals(quota, jobs, trainjob)
        out += _quota_constraints(quota, jobs)
    return out


def _quota_totals(quota: Quota, jobs: list[JobView], trainjob: TrainJobView) -> list[Violation]:
    out = []
    usages = [(job, pod_usage(job.pod_requests, job.pod_limits)) for job in jobs]
    for key, hard in quota.hard.items():
        parts = [(job, usage[key]) for job, usage in usages if key in usage and job.pods]
        if not parts:
            continue
        needed = sum((q * job.pods for job, q in parts), Quantity(0))
        if not needed > hard:
            continue
        breakdown = " + ".join(f"{job.pods} x {q.canonical()} ({job.name})" for job, q in parts)
        out.append(
            Violation(
                _quota_path(key, [job for job, _ in parts], trainjob),
                f"{quota.display}: this TrainJob alone needs {key} {needed.canonical()} with all its pods running "
                f"({breakdown}), more than the quota's hard {hard.canonical()}: it could never be admitted in full",
                current_value=needed.canonical(),
            )
        )
    return out


def _quota_path(key: str, jobs: list[JobView], trainjob: TrainJobView) -> str:
    section: Section = "limits" if key.startswith("limits.") else "requests"
    name = key.removeprefix("limits.").removeprefix("requests.")
    if key not in ("pods", "count/pods"):
        for job in jobs:
            path = _job_path(job, section, name)
            if path != RUNTIME_REF_PATH:
                return path
    trainer = trainjob.spec.trainer
    return NUM_NODES_PATH if trainer is not None and trainer.num_nodes is not None else RUNTIME_REF_PATH


def _quota_constraints(quota: Quota, jobs: list[JobView]) -> list[Violation]:
    """A quota on cpu or memory makes admission require that value of every container."""
    required: dict[tuple[Section, str], list[str]] = {}
    for key in quota.hard:
        if key in _QUOTA_VALIDATED:
            section, name = _QUOTA_VALIDATED[key]
            required.setdefault((section, name), []).append(key)
    out = []
    for job in jobs:
        pod_level = {*job.pod.requests, *job.pod.limits}
        for c in job.containers:
            for (section, name), keys in required.items():
                if name in c.section(section) or name in pod_level:
                    continue
                out.append(
                    Violation(
                        c.resources_path or RUNTIME_REF_PATH,
                        f"{quota.display} tracks {', '.join(keys)}, so admission requires {section}.{name} of "
                        f"every container, and {_where(job, c)} has none",
                    )
                )
    return out


def _scopes_match(quota: Quota, job: JobView) -> bool | None:
    """Whether the quota applies to the job's pods; None when that cannot be told from the template."""
    result = True
    for requirement in quota.scopes:
        match = _scope_matches(requirement, job)
        if match is None:
            return None
        result = result and match
    return result


def _scope_matches(requirement: ScopeRequirement, job: JobView) -> bool | None:
    scope, operator = requirement.scope, requirement.operator
    if scope in ("Terminating", "NotTerminating", "BestEffort", "NotBestEffort"):
        if scope in ("Terminating", "NotTerminating"):
            deadline = job.pod_spec.get("activeDeadlineSeconds")
            has = isinstance(deadline, int) and not isinstance(deadline, bool) and deadline >= 0
            holds = has if scope == "Terminating" else not has
        else:
            holds = _best_effort(job) if scope == "BestEffort" else not _best_effort(job)
        return holds if operator == "Exists" else (not holds if operator == "DoesNotExist" else None)
    if scope == "PriorityClass":
        priority_class = job.pod_spec.get("priorityClassName")
        value = priority_class if isinstance(priority_class, str) else ""
        checks: dict[str, bool] = {
            "In": value in requirement.values,
            "NotIn": value not in requirement.values,
            "Exists": value != "",
            "DoesNotExist": value == "",
        }
        return checks.get(operator)
    return None


def _best_effort(job: JobView) -> bool:
    values = [*job.pod.requests.items(), *job.pod.limits.items()]
    for c in job.containers:
        for section in SECTIONS:
            values += c.quantities(section).items()
    return not any(name in _QOS_RESOURCES and not q.is_zero() for name, q in values)


# The functionConfig's platform policy


def platform_violations(view: TrainJobPods, config: Options) -> list[Violation]:
    maxima = {name: parse_quantity(raw) for name, raw in config.max_per_container.items()}
    allowed = set(config.allowed_resources) if config.allowed_resources is not None else None
    out: list[Violation] = []
    for job in view.jobs:
        for c in job.containers:
            for section, name, value, limit in _above(c, maxima):
                out.append(
                    _above_cap(
                        _container_path(c, section, name),
                        f"{section}.{name} {value.quantity.canonical()} ({value.source}) of {_where(job, c)}",
                        value,
                        f"the policy's maximum per container, {limit.canonical()} (functionConfig maxPerContainer)",
                    )
                )
            names = sorted({*c.requests, *c.limits})
            for name in names:
                section = "limits" if name in c.limits else "requests"
                if allowed is not None and name not in allowed:
                    out.append(
                        Violation(
                            _container_path(c, section, name),
                            f"{_where(job, c)} uses {name}, which the platform does not allow "
                            f"(functionConfig allowedResources: {', '.join(sorted(allowed)) or 'none'})",
                            current_value=name,
                        )
                    )
                if not config.allow_gpu_in_sidecars and c.container_list == "initContainers" and config.is_gpu(name):
                    value = c.section(section)[name]
                    if value.quantity.is_zero():
                        continue
                    out.append(
                        Violation(
                            _container_path(c, section, name),
                            f"{_where(job, c)} asks for {name} {value.quantity.canonical()} ({value.source}), "
                            "but the platform lets only regular containers use GPUs "
                            "(functionConfig allowGpuInSidecars: false applies to every initContainers entry)",
                            current_value=value.quantity.canonical(),
                        )
                    )
    return out


# maxPerRole. The initializer jobs are the ones upstream labels so (pkg/constants/constants.go
# DatasetInitializer, ModelInitializer): the runtime's label, since a patch that changes it is refused
# before the policy runs (checks/rules/role_labels.py).
INITIALIZER_ANCESTORS = ("dataset-initializer", "model-initializer")
ROLE_MEANING = {
    "trainer": "the trainer container",
    "initializer": "the containers of the initializer jobs",
    "sidecar": "restartable init containers and every other container besides the trainer",
    "initContainer": "init containers that run to completion",
}


def container_role(topo: Topology, job: JobView, c: ContainerView) -> str:
    """The ``maxPerRole`` role of a container: ``trainer`` for the ``node`` container of a
    trainer-labelled job (or of any job resourcesPerNode sizes, ``Topology.is_trainer``),
    ``initializer`` for a ``containers`` entry of an initializer job, ``initContainer`` for an init
    container that runs to completion, ``sidecar`` for every other container."""
    ancestor = topo.ancestor(job.name)
    if c.container_list == "containers":
        if topo.is_trainer(job.name, c.container_list, c.name):
            return "trainer"
        if ancestor == TRAINER_ANCESTOR and c.name == TRAINER_CONTAINER:
            return "trainer"
        if ancestor in INITIALIZER_ANCESTORS:
            return "initializer"
        return "sidecar"
    return "sidecar" if c.role == "sidecar" else "initContainer"


def role_violations(view: TrainJobPods, config: Options, topo: Topology) -> list[Violation]:
    maxima = {
        role: {name: parse_quantity(raw) for name, raw in caps.items()} for role, caps in config.max_per_role.items()
    }
    out: list[Violation] = []
    for job in view.jobs:
        for c in job.containers:
            role = container_role(topo, job, c)
            for section, name, value, limit in _above(c, maxima.get(role, {})):
                source, path, fix = value.source, _container_path(c, section, name), ""
                if source.startswith(LIMIT_RANGE_SOURCE):
                    # Every default that reaches the pod counts: a LimitRange may come from the repository
                    # itself, and only the platform's own input may exempt a value from its caps.
                    unset = f"{section}.{name}" if _set_here(c, name) else name
                    source += f", a default: neither the TrainJob nor the runtime sets {unset} for this container"
                    path = c.resources_path or RUNTIME_REF_PATH  # the patch that sized the container
                    fix = (
                        f"; set {section}.{name} of this container within the cap (the LimitRange's default "
                        "applies only where the container has none)"
                    )
                cap = (
                    f"the policy's maximum for the {role} role, {limit.canonical()} "
                    f"(functionConfig maxPerRole.{role}: {ROLE_MEANING[role]})"
                )
                what = f"{section}.{name} {value.quantity.canonical()} ({source}) of {_where(job, c)}"
                out.append(_above_cap(path, what, value, cap + fix))
    return out


def _above(c: ContainerView, caps: Mapping[str, Quantity]) -> Iterator[tuple[Section, str, Value, Quantity]]:
    """The container's values above ``caps``; a request defaulted from its limit is the limit's."""
    for section in SECTIONS:
        for name, value in sorted(c.section(section).items()):
            cap = caps.get(name)
            if cap is not None and value.quantity > cap and value.source != DEFAULTED_FROM_LIMITS:
                yield section, name, value, cap


def _above_cap(path: str, what: str, value: Value, cap: str) -> Violation:
    return Violation(path, f"{what} is above {cap}", current_value=value.quantity.canonical())


def _set_here(c: ContainerView, name: str) -> bool:
    """Whether the TrainJob or the runtime sets ``name`` for the container (a request or a limit)."""
    values = [c.section(section).get(name) for section in SECTIONS]
    return any(v is not None and not v.source.startswith(LIMIT_RANGE_SOURCE) for v in values)
