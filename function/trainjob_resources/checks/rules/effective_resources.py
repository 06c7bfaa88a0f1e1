"""A container's resources once every patch is merged (``validate_effective``): what Kubernetes
refuses of the result, attributed to the values that made it."""

from __future__ import annotations

from typing import Any

from ...values.violations import Violation
from ..context import TrainJobContext
from ..validate import validate_effective
from .framework import Rule
from .reads import EFFECTIVE as EFFECTIVE_RESOURCES
from .stages import EFFECTIVE


def _check(_: TrainJobContext, effective: Any) -> list[Violation]:
    return validate_effective(effective)


RULE = Rule(
    "effective-resources",
    (EFFECTIVE,),
    "effective",
    (EFFECTIVE_RESOURCES,),
    "merged resources Kubernetes refuses (a limit below its request, ...)",
    _check,
)
