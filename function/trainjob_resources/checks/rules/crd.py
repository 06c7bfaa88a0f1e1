"""What the TrainJob CRD's schema and CEL rules refuse (``trainer/crd_rules.py``, after
``manifests/base/crds/trainer.kubeflow.org_trainjobs.yaml``): checked with or without the runtime."""

from __future__ import annotations

from typing import Any

from ...trainer.crd_rules import crd_violations
from ...values.violations import Violation
from ..context import TrainJobContext
from .framework import Rule
from .stages import RUNTIME_FREE, TRAINJOB


def _check(context: TrainJobContext, _: Any) -> list[Violation]:
    # A resolved TrainJob is written out by materialize mode, its quantities as the API server stores them.
    rewritten = context.entry is not None and not context.native
    return crd_violations(context.raw, context.config.mode, context.directives, rewritten, context.release)


RULE = Rule(
    "crd",
    (RUNTIME_FREE, TRAINJOB),
    "trainjob",
    (),  # reads the TrainJob as written: never remembered
    "what the API server refuses by the TrainJob CRD's schema and CEL rules",
    _check,
)
