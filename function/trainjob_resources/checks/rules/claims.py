"""A ContainerPatch's resource claims against the pod's ``resourceClaims`` (``claim_violations``)."""

from __future__ import annotations

from typing import Any

from ...values.violations import Violation
from ..context import TrainJobContext
from ..validate import claim_violations
from .framework import Rule
from .reads import CONTAINER_SITES, PATCHED_RESOURCES, RUNTIME
from .stages import PATCHES


def _check(context: TrainJobContext, site: Any) -> list[Violation]:
    runtime = context.runtime
    assert runtime.model is not None
    return claim_violations(site, runtime.model, runtime.display)


RULE = Rule(
    "claims",
    (PATCHES,),
    "container-site",
    (RUNTIME, CONTAINER_SITES, PATCHED_RESOURCES),
    "resource claims the pod does not declare",
    _check,
)
