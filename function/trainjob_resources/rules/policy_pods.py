"""The pods the policy stage checks, and the first of its rules: the namespace's LimitRanges and
ResourceQuotas read, and the TrainJob's pods as ``explain`` shows them, effective values after the
API server's defaulting (requests from limits) and the LimitRanger's (the namespace's
``default``/``defaultRequest``). Computed once per TrainJob (``pods_of``) for every rule of the
stage: ``limit_range``, ``resource_quota``, ``max_per_container``, ``allowed_resources``,
``max_per_role`` and ``resource_summary``.

Namespace findings have the severity ``namespacePolicy`` names (``off``: LimitRanges and
ResourceQuotas are ignored altogether); platform findings are errors. Each names the object and
points at the TrainJob field that set the value (a patch or resourcesPerNode), else at
``spec.runtimeRef``. While a policy applies (``policy_set``), a check that cannot run is a check
that did not pass: a value left out of the totals is an error, and so is a TrainJob whose pods
cannot be totalled (``policy_stage.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final, TypeVar

from ..krm.resource_list import Item
from ..options.options import Options
from ..report.explain import ContainerView, JobView, TrainJobPods, explain_trainjob
from ..resolve.bundle import Bundle
from ..resolve.context import TrainJobContext
from ..values.records import MutableRecord
from ..values.violations import Violation
from .framework import Rule, key_of
from .namespace_objects import (
    LIMIT_RANGE,
    RESOURCE_QUOTA,
    LimitRange,
    Quota,
    Unreadable,
    read_limit_range,
    read_quota,
)
from .reads import MANAGERS, NAMESPACE_POLICY, NUM_NODES, RESOURCES_PER_NODE, RUNTIME, SIZED_CONTAINERS, TOPOLOGY
from .stages import POLICY

UNTOTALLED = "the resources of this TrainJob's pods cannot be totalled exactly, so no policy was checked"
T = TypeVar("T")
# The pods themselves, but for how many there are: TrainJobs that differ in numNodes alone share them.
POD_READS: Final = (RUNTIME, NAMESPACE_POLICY, TOPOLOGY, MANAGERS, RESOURCES_PER_NODE, SIZED_CONTAINERS)
# What every rule of the stage reads: the pods, and numNodes for how many there are.
POLICY_READS: Final = (*POD_READS, NUM_NODES)


class PolicyPods(MutableRecord):
    """``view``: the pods; ``containers``: each container of each replicated job (the subjects of a
    ``pod-container`` rule); ``unread``: the namespace objects that cannot be read; ``closed``: whether
    a policy applies, so that a check that cannot run refuses."""

    __slots__ = ("closed", "containers", "limit_ranges", "quotas", "unread", "view")

    def __init__(
        self, view: TrainJobPods, namespace: tuple[list[LimitRange], list[Quota]], unread: list[Violation], closed: bool
    ) -> None:
        self.view = view
        self.containers: list[tuple[JobView, ContainerView]] = [(job, c) for job in view.jobs for c in job.containers]
        self.limit_ranges, self.quotas = namespace
        self.unread = unread
        self.closed = closed


def pods_of(context: TrainJobContext) -> PolicyPods:
    """The TrainJob's pods and namespace objects, once per context (QuantityError: they cannot be
    totalled)."""
    found: PolicyPods | None = context.policy
    if found is not None:
        return found
    config, bundle, namespace = context.config, context.bundle, context.namespace
    unread: list[Violation] = []
    limit_ranges: list[LimitRange] = []
    quotas: list[Quota] = []
    if config.namespace_policy != "off":
        for item in bundle.namespace_policy(LIMIT_RANGE, namespace):
            _read(item, read_limit_range, limit_ranges, unread)
        for item in bundle.namespace_policy(RESOURCE_QUOTA, namespace):
            _read(item, read_quota, quotas, unread)
    defaults = [lr.container_defaults() for lr in limit_ranges]
    view = explain_trainjob(context, defaults, (context.memo.pod_parts, key_of(POD_READS, context)))
    found = context.policy = PolicyPods(view, (limit_ranges, quotas), unread, policy_set(config, bundle, namespace))
    return found


def _read(item: Item, reader: Callable[[Item], T], into: list[T], unread: list[Violation]) -> None:
    try:
        into.append(reader(item))
    except Unreadable as err:
        unread.append(Violation("", f"{item.ref.display()} cannot be read ({err}): it is not checked", "warning"))


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


def closed(pods: PolicyPods, found: list[Violation]) -> list[Violation]:
    """``found``, where a policy applies, with a value left out of the totals (no quantity this
    function reads, so hidden from every check) an error."""
    return [_closed(v) for v in found] if pods.closed else found


def namespace_findings(context: TrainJobContext, pods: PolicyPods, found: list[Violation]) -> list[Violation]:
    """A LimitRange's or ResourceQuota's findings, with the severity ``namespacePolicy`` names."""
    severity = context.config.namespace_policy
    if severity == "off":
        return []
    return closed(pods, [Violation(v.path, v.message, severity, v.current_value, v.proposed_value) for v in found])


def _closed(violation: Violation) -> Violation:
    if violation.severity != "warning" or " is left out" not in violation.message:
        return violation
    message = f"{violation.message}; the policy cannot be checked on it, so it is refused"
    return Violation(violation.path, message, "error", violation.current_value, violation.proposed_value)


def untotalled(context: TrainJobContext, reason: str) -> list[Violation]:
    """This rule's one finding when the pods cannot be totalled: refused while a policy applies."""
    if policy_set(context.config, context.bundle, context.namespace):
        message = f"{UNTOTALLED}: {reason}; the policy cannot be checked, so it is refused"
        return RULE.named([Violation("", message, "error")])
    return RULE.named([Violation("", f"{UNTOTALLED}: {reason}", "warning")])


def _check(context: TrainJobContext, _: Any) -> list[Violation]:
    pods = pods_of(context)
    return closed(pods, [*pods.unread, *pods.view.problems])


RULE = Rule(
    "policy-pods",
    (POLICY,),
    "trainjob",
    POLICY_READS,
    "a LimitRange or ResourceQuota that cannot be read; a value left out of the pods' totals; pods that cannot be "
    "totalled",
    _check,
)
