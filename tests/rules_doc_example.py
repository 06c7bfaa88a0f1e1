"""A ContainerPatch that sets a container's memory limit to zero: the API server accepts it
(pkg/apis/core/validation/validation.go ``validateResourceRequirements`` asks only for a
non-negative quantity), but a container without memory cannot run."""

from __future__ import annotations

from ..kube.quantity import QuantityError, parse_quantity
from ..resolve.context import TrainJobContext
from ..trainer.sites import ContainerSite
from ..values import fieldpath
from ..values.violations import Violation
from .framework import Rule
from .reads import CONTAINER_SITES, PATCHED_RESOURCES
from .stages import PATCHES


def _check(context: TrainJobContext, site: ContainerSite) -> list[Violation]:
    limits = (site.resources or {}).get("limits")
    memory = limits.get("memory") if isinstance(limits, dict) else None
    if memory is None:
        return []
    try:
        zero = parse_quantity(memory).is_zero()
    except QuantityError:
        return []  # not a quantity: container-site's error, not this rule's
    if not zero:
        return []
    return [
        Violation(
            fieldpath.child(f"{site.resources_path}.limits", "memory"),
            f"a memory limit of {memory}: container {site.name!r} cannot run without memory",
            severity="warning",
            current_value=memory,
        )
    ]


RULE = Rule(
    "zero-memory",
    (PATCHES,),
    "container-site",
    (CONTAINER_SITES, PATCHED_RESOURCES),
    "memory limits of zero",
    _check,
)
