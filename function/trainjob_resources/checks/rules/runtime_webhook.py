"""What upstream's runtime webhooks refuse of the derived runtime (``webhook_violations``, after
``pkg/webhooks/trainingruntime_webhook.go`` and ``clustertrainingruntime_webhook.go``)."""

from __future__ import annotations

from typing import Any

from ...values.violations import Violation
from ..context import TrainJobContext
from ..validate import webhook_violations
from .framework import Rule
from .stages import DERIVE


def _check(context: TrainJobContext, _: Any) -> list[Violation]:
    entry = context.runtime
    assert entry.model is not None
    return webhook_violations(entry.model, entry.display, context.kind, context.release.webhook_selector)


RULE = Rule(
    "runtime-webhook",
    (DERIVE,),
    "trainjob",
    (),
    "derived runtimes the runtime webhook would refuse",
    _check,
)
