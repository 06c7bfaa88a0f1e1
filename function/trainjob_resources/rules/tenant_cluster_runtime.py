"""derivedRuntimeKind ClusterTrainingRuntime from a repository's local-config copy: two
Applications with different copies of one base would emit one cluster-scoped object (one name: the
name hashes the base's identity, not its content) with different contents."""

from __future__ import annotations

from typing import Any

from ..resolve.context import TrainJobContext
from ..trainer.api import CLUSTER_RUNTIME_KIND
from ..values.violations import Violation
from .framework import Rule
from .stages import DERIVE


def _check(context: TrainJobContext, _: Any) -> list[Violation]:
    entry = context.runtime
    if context.kind != CLUSTER_RUNTIME_KIND or not entry.local or entry.platform:
        return []
    assert context.plan is not None
    effective = context.plan.effective
    site = next(s for s in context.sites if s.resources is not None and s.key in effective)
    return [
        Violation(
            site.resources_path,
            f"derivedRuntimeKind ClusterTrainingRuntime needs the base runtime from the platform, but "
            f"{entry.display} is this repository's local-config copy: another repository's copy (another "
            "version) would give the same cluster-scoped name with other content, and the two deployers would "
            "overwrite each other. Use derivedRuntimeKind: TrainingRuntime (the default), or let the platform "
            "supply the runtime (`trainjob-resources render --runtimes PATH`, or the runtime itself in the bundle)",
        )
    ]


RULE = Rule(
    "tenant-cluster-runtime",
    (DERIVE,),
    "trainjob",
    (),
    "a ClusterTrainingRuntime derived from a repository's own copy of its base",
    _check,
)
