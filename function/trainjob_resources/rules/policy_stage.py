"""The policy stage as a whole: its rules in registry order over the pods ``policy_pods`` computes,
and, when those pods cannot be totalled exactly (a ``QuantityError`` anywhere in the stage), the
one finding that says so in place of every other (``policy_pods.untotalled``)."""

from __future__ import annotations

from typing import Final

from ..kube.quantity import QuantityError
from ..report.explain import TrainJobPods
from ..resolve.context import TrainJobContext
from ..values.violations import Violation
from . import registry
from .framework import run
from .policy_pods import pods_of, untotalled
from .stages import POLICY

RULES: Final = registry.of(POLICY)
READS: Final = registry.reads(POLICY)


def findings(context: TrainJobContext) -> list[Violation]:
    try:
        return run(RULES, context)
    except QuantityError as err:
        return untotalled(context, str(err))


def assess(context: TrainJobContext) -> tuple[TrainJobPods, list[Violation]]:
    """The TrainJob's pods (as ``explain`` shows them) and every policy finding about them
    (QuantityError: they cannot be totalled)."""
    found = run(RULES, context)
    return pods_of(context).view, found
