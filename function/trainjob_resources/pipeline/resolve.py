"""The resolve stage: the runtime a TrainJob's runtimeRef names, with the stage's rules; and the
runtime-free stage, for a TrainJob whose runtime is not in the bundle."""

from __future__ import annotations

from typing import Final

from ..resolve.bundle import path_of
from ..resolve.context import TrainJobContext
from ..rules import registry, runtime_ref
from ..rules.framework import run
from ..rules.stages import RESOLVE, RUNTIME_FREE
from ..trainer.topology import topology
from ..trainer.trainjob_view import resources_per_node
from ..values.violations import Violation
from .outcome import Outcome
from .parse import writable_copy

_RULES: Final = registry.of(RESOLVE)
_RUNTIME_FREE_RULES: Final = registry.of(RUNTIME_FREE)


def resolve(context: TrainJobContext) -> list[Violation]:
    """The runtime the TrainJob names, and the resolve stage's findings; without any, the context
    is ``resolved`` (and the ref follows a kustomize rename)."""
    item, trainjob = context.item, context.trainjob
    resolution = context.resolution = runtime_ref.resolve(
        context.bundle, trainjob.spec.runtime_ref, item.namespace, context.overrides, path_of(item), item
    )
    found = run(_RULES, context)
    entry = resolution.entry
    if entry is None or found:
        return found
    assert entry.model is not None  # runtime-ref refused it otherwise
    if runtime_ref.follows_rename(context):
        if context.work is None:
            context.work = writable_copy(item.node)
        context.raw = runtime_ref.rename_ref(context.work, context.raw, entry.item.name)
    context.resolved(entry, resources_per_node(trainjob), topology(entry.model, trainjob, context.sites))
    return []


def runtime_free(context: TrainJobContext, found: list[Violation]) -> Outcome:
    """A TrainJob whose runtime is not in the bundle (``found``: why): passed through, checked by the
    rules that need no runtime (the CRD's, and those of upstream's TrainJob webhook that read none)."""
    resolution = context.resolution
    assert resolution is not None and found  # runtime-ref says why first
    severity = found[0].severity
    outcome = Outcome(found)
    if severity != "error":
        outcome.violations += run(_RUNTIME_FREE_RULES, context)
        if outcome.failed and severity == "info":
            del outcome.violations[0]  # "passed through unchanged": not with an error
    outcome.unchecked = resolution.absent and not context.overrides and not outcome.failed
    return outcome
