"""A runtimeRef of another API group: resources its patches set reach no Trainer runtime."""

from __future__ import annotations

from typing import Any

from ...trainer.sites import resources_paths
from ...values.violations import Violation
from ..context import TrainJobContext
from ..validate import foreign_runtime_resources
from .framework import Rule
from .stages import RUNTIME_FREE


def _check(context: TrainJobContext, _: Any) -> list[Violation]:
    resolution = context.resolution
    if resolution is None or resolution.foreign is None or not context.overrides:
        return []
    return foreign_runtime_resources(resolution.foreign, list(resources_paths(context.raw)))


RULE = Rule(
    "foreign-runtime-resources",
    (RUNTIME_FREE,),
    "trainjob",
    (),
    "resources in the patches of a TrainJob whose runtimeRef names another API group",
    _check,
)
