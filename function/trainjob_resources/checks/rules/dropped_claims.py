"""Claims a written resourcesPerNode makes Kubeflow Trainer drop (``trainer/per_node.py``)."""

from __future__ import annotations

from typing import Any

from ...trainer.per_node import dropped_claims
from ...values.violations import Violation
from ..context import TrainJobContext
from .framework import Rule
from .reads import CONTAINER_SITES, PATCHED_RESOURCES, RESOURCES_PER_NODE, RUNTIME, TOPOLOGY
from .stages import PATCHES


def _check(context: TrainJobContext, _: Any) -> list[Violation]:
    return dropped_claims(context.runtime.jobs, context.sites, context.per_node, context.topo)


RULE = Rule(
    "dropped-claims",
    (PATCHES,),
    "trainjob",
    (RUNTIME, CONTAINER_SITES, PATCHED_RESOURCES, RESOURCES_PER_NODE, TOPOLOGY),
    "trainer claims lost when resourcesPerNode replaces the container's resources",
    _check,
)
