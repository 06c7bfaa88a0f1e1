"""The derived runtime's name taken by an object of the bundle the function did not derive."""

from __future__ import annotations

from typing import Any

from ..derive.provenance import DERIVED_FROM, old
from ..resolve.context import TrainJobContext
from ..values.violations import Violation
from .framework import Rule
from .stages import DERIVE


def _check(context: TrainJobContext, _: Any) -> list[Violation]:
    identity = context.derived_identity
    clash = context.bundle.names.get(identity)
    if clash is None or clash.annotation(DERIVED_FROM) is not None or clash.annotation(old(DERIVED_FROM)) is not None:
        return []
    kind, _, name = identity
    return [
        Violation(
            "spec.runtimeRef",
            f"the derived runtime would be {kind} {name!r}, but an unrelated object of that name is in "
            "the bundle: rename that object (nothing was changed)",
        )
    ]


RULE = Rule(
    "name-clash",
    (DERIVE,),
    "trainjob",
    (),
    "a derived runtime's name taken by an unrelated object of the bundle",
    _check,
)
