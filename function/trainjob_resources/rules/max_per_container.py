"""The platform's ``maxPerContainer`` (functionConfig): no request or limit of any container above
its cap, counting every value that reaches the pod, a LimitRange's defaults included (the
repository may ship the LimitRange); a request defaulted from its limit is the limit's. Errors."""

from __future__ import annotations

from functools import lru_cache

from ..kube.quantity import Quantity, parse_quantity
from ..report.explain import ContainerView, JobView
from ..resolve.context import TrainJobContext
from ..values.violations import Violation
from .framework import Rule
from .policy_math import above, above_cap, container_path, where
from .policy_pods import POLICY_READS
from .stages import POLICY


@lru_cache(maxsize=16)
def caps(written: tuple[tuple[str, str], ...]) -> dict[str, Quantity]:
    return {name: parse_quantity(raw) for name, raw in written}


def _check(context: TrainJobContext, subject: tuple[JobView, ContainerView]) -> list[Violation]:
    written = context.config.max_per_container
    if not written:
        return []
    job, c = subject
    return [
        above_cap(
            container_path(c, section, name),
            f"{section}.{name} {value.quantity.canonical()} ({value.source}) of {where(job, c)}",
            value,
            f"the policy's maximum per container, {limit.canonical()} (functionConfig maxPerContainer)",
        )
        for section, name, value, limit in above(c, caps(tuple(written.items())))
    ]


RULE = Rule(
    "max-per-container",
    (POLICY,),
    "pod-container",
    POLICY_READS,
    "a container's request or limit above the platform's maxPerContainer",
    _check,
)
