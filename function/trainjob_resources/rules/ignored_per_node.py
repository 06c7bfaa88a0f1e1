"""``newRuntimeInfo`` (pkg/runtime/core/trainingruntime.go) merges resourcesPerNode only when the
runtime has an mlPolicy: without one, what the TrainJob writes there is ignored."""

from __future__ import annotations

from typing import Any

from ..resolve.context import TrainJobContext
from ..trainer.effective import RESOURCES_PER_NODE_PATH
from ..trainer.runtime_view import ANCESTOR_LABEL, TRAINER_ANCESTOR
from ..values.violations import Violation
from .framework import Rule
from .reads import RESOURCES_PER_NODE, RUNTIME
from .stages import PATCHES


def _check(context: TrainJobContext, _: Any) -> list[Violation]:
    runtime = context.runtime.model
    assert runtime is not None
    if context.per_node is None or runtime.ml_policy is not None:
        return []
    labelled = [j.name for j in runtime.replicated_jobs if j.labels.get(ANCESTOR_LABEL) == TRAINER_ANCESTOR]
    where = f"replicated job {labelled[0]!r}" if labelled else "the trainer's replicated job"
    return [
        Violation(
            RESOURCES_PER_NODE_PATH,
            f"{context.runtime.display} has no mlPolicy, so Kubeflow Trainer ignores spec.trainer.resourcesPerNode "
            f"(newRuntimeInfo): size the node container of {where} with resources in a runtimePatches "
            "ContainerPatch instead, or use a runtime with an mlPolicy",
        )
    ]


RULE = Rule(
    "ignored-per-node",
    (PATCHES,),
    "trainjob",
    (RUNTIME, RESOURCES_PER_NODE),
    "resourcesPerNode on a runtime without mlPolicy",
    _check,
)
