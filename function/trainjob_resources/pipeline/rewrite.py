"""The rewrite stage: a TrainJob that derives nothing passed through (rewritten only to follow a
kustomize rename or undo an earlier render), resourcesPerNode's quantities written as stored, and
the stage's rules on what the rewrite did."""

from __future__ import annotations

from typing import Final

from yaml.nodes import MappingNode

from ..resolve.context import TrainJobContext
from ..rules import registry, runtime_ref
from ..rules.framework import run
from ..rules.stages import REWRITE
from ..rules.stored_quantities import respell
from .outcome import Outcome

_RULES: Final = registry.of(REWRITE)


def pass_through(context: TrainJobContext, outcome: Outcome) -> None:
    """A TrainJob that derives nothing (native mode, or no resources in its patches): rewritten only
    to follow a kustomize rename, or to restore what an earlier render changed."""
    if runtime_ref.follows_rename(context):
        name = context.runtime.item.name
        outcome.node = context.work
        outcome.changes.append(f"runtimeRef.name set to {name!r}, the runtime's name after kustomize")
    elif context.work is not None and not context.native:
        outcome.node = context.work
        outcome.changes.append("no resources in runtimePatches any more: runtimeRef restored")


def rewrite(context: TrainJobContext, outcome: Outcome) -> None:
    """The rewrite's last step (resourcesPerNode's quantities as stored, in materialize mode), then
    the rewrite stage's rules."""
    if not context.native:
        _as_stored(context, outcome)
    context.rewritten = outcome.node
    context.derives = outcome.derive is not None
    outcome.violations += run(_RULES, context)


def _as_stored(context: TrainJobContext, outcome: Outcome) -> None:
    """Write the quantities of resourcesPerNode as the API server stores them, on a TrainJob that
    keeps runtimePatches (``rules/stored_quantities.py``: any other spelling fails every re-sync)."""
    node = outcome.node or context.work or context.item.node
    assert isinstance(node, MappingNode)
    context.respelled = respell(node)
    if context.respelled:
        outcome.node = node
        outcome.changes.append("quantities in spec.trainer.resourcesPerNode written as the API server stores them")
