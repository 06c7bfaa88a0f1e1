"""The patches' managers: unique, and of the form upstream's CRD requires (``validate_managers``)."""

from __future__ import annotations

from typing import Any

from ...values.violations import Violation
from ..context import TrainJobContext
from ..validate import validate_managers
from .framework import Rule
from .reads import MANAGERS
from .stages import PATCHES


def _check(context: TrainJobContext, _: Any) -> list[Violation]:
    return validate_managers(list(context.managers))


RULE = Rule("managers", (PATCHES,), "trainjob", (MANAGERS,), "invalid or repeated runtimePatches managers", _check)
