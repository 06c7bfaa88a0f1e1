"""What upstream reads from a runtime's name or labels, which a derived runtime changes
(``checks/runtime_name.py``: torchtune's model from the name, the deprecated-runtime warning)."""

from __future__ import annotations

from typing import Any

from ...values.violations import Violation
from ..context import TrainJobContext
from ..runtime_name import name_keyed_violations
from .framework import Rule
from .stages import DERIVE


def _check(context: TrainJobContext, _: Any) -> list[Violation]:
    assert context.plan is not None
    effective = context.plan.effective
    folded = [s for s in context.sites if s.key in effective]
    return name_keyed_violations(context.trainjob, context.runtime, folded, context.kind)


RULE = Rule(
    "runtime-name",
    (DERIVE,),
    "trainjob",
    (),
    "TrainJobs that upstream reads by their runtime's name, which a derived runtime changes",
    _check,
)
