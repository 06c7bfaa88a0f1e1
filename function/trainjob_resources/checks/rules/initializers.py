"""``pkg/runtime/framework/plugins/jobset/jobset.go`` ``Validate``: a TrainJob's initializers need
their replicated job, container and volume mount in the runtime as patched."""

from __future__ import annotations

from typing import Any

from ...values.violations import Violation
from ..context import TrainJobContext
from ..validate import initializer_violations
from .framework import Rule
from .stages import TRAINJOB


def _check(context: TrainJobContext, _: Any) -> list[Violation]:
    runtime = context.runtime
    assert runtime.model is not None
    return initializer_violations(context.raw, runtime.model, context.sites, runtime.display)


RULE = Rule(
    "initializers",
    (TRAINJOB,),
    "trainjob",
    (),  # reads spec.initializer as written: never remembered
    "dataset and model initializers without their job, container or volume mount",
    _check,
)
