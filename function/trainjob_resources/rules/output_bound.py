"""The output bound: the derived runtimes of one render hold at most as many bytes as the input
may (``derive/derived_bound.py`` ``OutputBound``, which keeps the count across the render and the
fork of ``cli/fan_out.py``). Last of its stage: a runtime is counted only when nothing else stops
its derivation."""

from __future__ import annotations

from typing import Any

from ..resolve.context import TrainJobContext
from ..values.violations import Violation
from .framework import Rule
from .stages import DERIVE


def _check(context: TrainJobContext, _: Any) -> list[Violation]:
    assert context.plan is not None
    entry = context.runtime
    found = context.memo.bound.admit(context.derived_identity, entry.item, entry.display, len(context.plan.spelling))
    return [] if found is None else [found]


RULE = Rule(
    "output-bound",
    (DERIVE,),
    "trainjob",
    (),
    "a derived runtime that would take the render's derived runtimes past the output bound",
    _check,
)
