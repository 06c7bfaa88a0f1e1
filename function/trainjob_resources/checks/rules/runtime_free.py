"""The rules of upstream's TrainJob webhook that read no runtime (``pkg/runtime/framework/plugins/
jobset/jobset.go`` ``Validate``), for a TrainJob passed through without its runtime."""

from __future__ import annotations

from typing import Any

from ...values.violations import Violation
from ..context import TrainJobContext
from ..validate import runtime_free_violations
from .framework import Rule
from .stages import RUNTIME_FREE


def _check(context: TrainJobContext, _: Any) -> list[Violation]:
    resolution = context.resolution
    if resolution is not None and resolution.foreign is not None:
        return []
    return runtime_free_violations(list(context.managers), context.sites)


RULE = Rule(
    "runtime-free",
    (RUNTIME_FREE,),
    "trainjob",
    (),
    "managers and ContainerPatches the webhook refuses whatever the runtime",
    _check,
)
