"""The TrainJob's resource summary (info): requests per pod of each replicated job, and in total,
as ``explain`` counts them. The policy stage's last rule."""

from __future__ import annotations

from typing import Any

from ..report.explain import summary
from ..resolve.context import TrainJobContext
from ..values.violations import Violation
from .framework import Rule
from .policy_pods import POLICY_READS, pods_of
from .stages import POLICY


def _check(context: TrainJobContext, _: Any) -> list[Violation]:
    return [Violation("", summary(pods_of(context).view), "info")]


RULE = Rule("resource-summary", (POLICY,), "trainjob", POLICY_READS, "the TrainJob's resource summary (info)", _check)
