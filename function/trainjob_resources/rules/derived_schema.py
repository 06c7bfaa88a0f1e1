"""A TrainJob that would derive a runtime from one the API server refuses by its CRD
(``runtime-schema``, ``trainer/crd_validate.py``): the derived runtime keeps every field of its base, so
the API server refuses it too, and the TrainJob that points at it then names a runtime that does not
exist. Nothing is derived; the finding names the base and its first refused field (the base's own
findings have the rest, at its file and line)."""

from __future__ import annotations

from typing import Any

from ..resolve.context import TrainJobContext
from ..values.violations import Violation
from .framework import Rule
from .runtime_schema import refusals
from .stages import DERIVE


def _check(context: TrainJobContext, _: Any) -> list[Violation]:
    entry = context.runtime
    found = refusals(context.bundle, entry)
    if not found:
        return []
    more = f" (and {len(found) - 1} more: see its errors)" if len(found) > 1 else ""
    return [
        Violation(
            "spec.runtimeRef",
            f"the derived {context.kind} would be refused by the API server, as {entry.display} is: "
            f"{found[0].path}: {found[0].message}{more}; no runtime is derived",
        )
    ]


RULE = Rule(
    "derived-schema",
    (DERIVE,),
    "trainjob",
    (),
    "TrainJobs that would derive a runtime from one the API server refuses by its CRD",
    _check,
)
