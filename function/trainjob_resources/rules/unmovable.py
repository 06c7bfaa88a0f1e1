"""Why the trainer containers' patches cannot move to ``spec.trainer.resourcesPerNode``
(``resolve/moving.py``): said under every ``trainerResources``, so that no proposal is missing
without a reason. In ``native`` mode nothing moves (KEP-2782 keeps the node container's patch:
``native_per_node``)."""

from __future__ import annotations

from typing import Any

from ..resolve.context import TrainJobContext
from ..values.violations import Violation
from .framework import Rule
from .reads import MODE, MOVED
from .stages import PATCHES


def _check(context: TrainJobContext, _: Any) -> list[Violation]:
    problem = context.moved[1]
    if problem is None or context.native:
        return []
    topo = context.topo
    first = next(s for s in context.sites if s.resources is not None and topo.is_trainer(*s.key))
    return [
        Violation(
            first.resources_path,
            f"the trainer container {first.name!r} of replicated job {first.job!r} is sized by "
            f"spec.trainer.resourcesPerNode, not by runtimePatches, and these resources cannot be moved there: "
            f"{problem}",
        )
    ]


RULE = Rule(
    "unmovable",
    (PATCHES,),
    "trainjob",
    (MODE, *MOVED),
    "trainer patches that resourcesPerNode cannot express",
    _check,
)
