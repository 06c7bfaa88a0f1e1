"""``resources`` in a ContainerPatch of a TrainJob whose runtimeRef names another API group: the
function knows nothing of that runtime, so it cannot derive one with them, and the API server
refuses the field (v2.3.0's ContainerPatch has none, pkg/apis/trainer/v1alpha1/trainjob_types.go),
as it does when the runtime is not in the bundle (``bundle.resolve``)."""

from __future__ import annotations

from typing import Any

from ..resolve.context import TrainJobContext
from ..trainer.sites import resources_paths
from ..values.violations import Violation
from .framework import Rule
from .stages import RUNTIME_FREE


def _check(context: TrainJobContext, _: Any) -> list[Violation]:
    resolution = context.resolution
    if resolution is None or resolution.foreign is None or not context.overrides:
        return []
    group = resolution.foreign
    return [
        Violation(
            path,
            f"runtimeRef names apiGroup {group!r}: not a Trainer runtime, so the function cannot derive one "
            "with these resources, and the API server refuses resources in a ContainerPatch (Trainer v2.3.0's "
            "ContainerPatch has no such field, pkg/apis/trainer/v1alpha1/trainjob_types.go: 'field not "
            "declared in schema'): size the containers in that runtime itself, or name a Trainer runtime",
        )
        for path in resources_paths(context.raw)
    ]


RULE = Rule(
    "foreign-runtime-resources",
    (RUNTIME_FREE,),
    "trainjob",
    (),
    "resources in the patches of a TrainJob whose runtimeRef names another API group",
    _check,
)
