"""A ``ResourceQuota`` in the TrainJob's namespace, as the quota admission plugin counts a pod
(pkg/quota/v1/evaluator/core/pods.go ``podComputeUsageHelper`` and its scopes): what one TrainJob
needs in total, all pods at once, against ``hard`` (it could never be admitted), and the rule that a
quota on cpu or memory makes every container set that value. A quota whose scopes cannot be decided
from the runtime's pod template (CrossNamespacePodAffinity, VolumeAttributesClass) is not checked.
Severity: ``namespacePolicy``."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ..kube.podmath import Quantities, Section
from ..kube.quantity import Quantity
from ..kube.resource_rules import is_extended_resource_name
from ..report.explain import NUM_NODES_PATH, RUNTIME_REF_PATH, SECTIONS, JobView, TrainJobPods
from ..resolve.context import TrainJobContext
from ..trainer.trainjob_view import TrainJobView
from ..values.violations import Violation
from .framework import Rule
from .namespace_objects import Quota, ScopeRequirement
from .policy_math import job_path, where
from .policy_pods import POLICY_READS, namespace_findings, pods_of
from .stages import POLICY

_QUOTA_VALIDATED: dict[str, tuple[Section, str]] = {
    "cpu": ("requests", "cpu"),
    "requests.cpu": ("requests", "cpu"),
    "limits.cpu": ("limits", "cpu"),
    "memory": ("requests", "memory"),
    "requests.memory": ("requests", "memory"),
    "limits.memory": ("limits", "memory"),
}
_QOS_RESOURCES = ("cpu", "memory")


def _check(context: TrainJobContext, _: Any) -> list[Violation]:
    if context.config.namespace_policy == "off":
        return []
    pods = pods_of(context)
    return namespace_findings(context, pods, quota_violations(pods.view, pods.quotas, context.trainjob))


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
        matches = [scopes_match(quota, job) for job in view.jobs]
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
            path = job_path(job, section, name)
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
                        f"every container, and {where(job, c)} has none",
                    )
                )
    return out


def quota_constraints(quota: Quota, jobs: list[JobView]) -> list[Violation]:
    """The containers of ``jobs`` that lack a value the quota makes admission require (``check``'s too)."""
    return _quota_constraints(quota, jobs)


def scopes_match(quota: Quota, job: JobView) -> bool | None:
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


RULE = Rule(
    "resource-quota",
    (POLICY,),
    "trainjob",
    POLICY_READS,
    "a ResourceQuota's hard exceeded by the TrainJob alone; a container without the cpu or memory a quota tracks",
    _check,
)
