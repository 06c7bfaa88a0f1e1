"""One ContainerPatch against the unpatched runtime and Kubernetes' resource rules
(``validate_container_site``), the trainer container's per ``trainerResources``."""

from __future__ import annotations

from typing import Any

from ...values.violations import Violation
from ..context import TrainJobContext
from ..validate import validate_container_site
from .framework import Rule
from .reads import MOVED, TRAINER_RESOURCES
from .stages import PATCHES


def _check(context: TrainJobContext, site: Any) -> list[Violation]:
    runtime = context.runtime
    trainer_resources = context.config.trainer_resources
    return validate_container_site(
        site, runtime.jobs, runtime.display, trainer_resources, context.topo, context.moved[0]
    )


RULE = Rule(
    "container-site",
    (PATCHES,),
    "container-site",
    (TRAINER_RESOURCES, *MOVED),
    "ContainerPatches naming a container the runtime lacks, and resources Kubernetes refuses",
    _check,
)
