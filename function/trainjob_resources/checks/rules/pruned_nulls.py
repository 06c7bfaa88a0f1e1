"""A ``null`` the API server prunes before any merge (``trainer/per_node.py`` ``pruned_nulls``): it
deletes nothing."""

from __future__ import annotations

from typing import Any

from ...trainer.per_node import pruned_nulls
from ...values.violations import Violation
from ..context import TrainJobContext
from .framework import Rule
from .reads import CONTAINER_SITES, MODE, PATCHED_RESOURCES, RESOURCES_PER_NODE
from .stages import PATCHES


def _check(context: TrainJobContext, _: Any) -> list[Violation]:
    return pruned_nulls(context.per_node, context.sites, native=context.native)


RULE = Rule(
    "pruned-nulls",
    (PATCHES,),
    "trainjob",
    (MODE, RESOURCES_PER_NODE, CONTAINER_SITES, PATCHED_RESOURCES),
    "nulls in resourcesPerNode (and, in native mode, in resources) that delete nothing",
    _check,
)
