"""Namespace policy (the bundle's LimitRanges and ResourceQuotas), platform policy (the
functionConfig's caps) and the resource summary, over the pods ``explain`` shows (``policy.py``)."""

from __future__ import annotations

from typing import Any

from ...values.violations import Violation
from ..context import TrainJobContext
from ..policy import evaluate
from .framework import Rule, key_of
from .reads import MANAGERS, NAMESPACE_POLICY, NUM_NODES, RESOURCES_PER_NODE, RUNTIME, SIZED_CONTAINERS, TOPOLOGY
from .stages import POLICY

# The pods themselves, but for how many there are: TrainJobs that differ in numNodes alone share them.
_POD_READS = (RUNTIME, NAMESPACE_POLICY, TOPOLOGY, MANAGERS, RESOURCES_PER_NODE, SIZED_CONTAINERS)


def _check(context: TrainJobContext, _: Any) -> list[Violation]:
    reuse = (context.memo.pod_parts, key_of(_POD_READS, context))
    return evaluate(context, reuse)


RULE = Rule(
    "namespace-policy",
    (POLICY,),
    "trainjob",
    (*_POD_READS, NUM_NODES),
    "LimitRange, ResourceQuota and platform caps exceeded; the TrainJob's resource summary",
    _check,
)
