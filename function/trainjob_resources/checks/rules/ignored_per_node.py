"""``newRuntimeInfo`` (pkg/runtime/core/trainingruntime.go) merges resourcesPerNode only when the
runtime has an mlPolicy: without one, what the TrainJob writes there is ignored."""

from __future__ import annotations

from typing import Any

from ...trainer.per_node import ignored_per_node
from ...values.violations import Violation
from ..context import TrainJobContext
from .framework import Rule
from .reads import RESOURCES_PER_NODE, RUNTIME
from .stages import PATCHES


def _check(context: TrainJobContext, _: Any) -> list[Violation]:
    runtime = context.runtime
    assert runtime.model is not None
    return ignored_per_node(runtime.model, context.per_node, runtime.display)


RULE = Rule(
    "ignored-per-node",
    (PATCHES,),
    "trainjob",
    (RUNTIME, RESOURCES_PER_NODE),
    "resourcesPerNode on a runtime without mlPolicy",
    _check,
)
