"""A TrainJob rendered before (kpt writes the output back, records and all) whose runtimeRef this
render changes: its overrides changed, or went, since. The API server refuses that change on an
existing TrainJob: runtimeRef is immutable (CEL ``self == oldSelf``,
``pkg/apis/trainer/v1alpha1/trainjob_types.go``)."""

from __future__ import annotations

from typing import Any

from yaml.nodes import Node

from ..derive.provenance import has_provenance
from ..resolve.context import TrainJobContext
from ..trainer.api import CLUSTER_RUNTIME_KIND
from ..values.violations import Violation
from ..yamltext import yamlnodes as yn
from .framework import Rule
from .stages import REWRITE

RECREATE = (
    "spec.runtimeRef is immutable (trainjob_types.go), so a cluster that has this TrainJob refuses the "
    "change: recreate the TrainJob (delete and apply; Argo CD: argocd.argoproj.io/sync-options: "
    "Force=true,Replace=true; README, Lifecycle on a live cluster)"
)


def _ref_name(node: Node | None) -> tuple[str, str]:
    ref = yn.get_path(node, "spec", "runtimeRef")
    return (yn.scalar(yn.get(ref, "kind")) or CLUSTER_RUNTIME_KIND, yn.scalar(yn.get(ref, "name")) or "")


def _check(context: TrainJobContext, _: Any) -> list[Violation]:
    read = context.item.node
    if context.rewritten is None or not has_provenance(read):
        return []
    before, after = _ref_name(read), _ref_name(context.rewritten)
    if before == after:
        return []
    if not context.derives:
        what = f"no resources in runtimePatches any more, so runtimeRef goes back from {before[1]!r} to {after[1]!r}"
    else:
        what = f"the overrides changed since the last render, so runtimeRef goes from {before[1]!r} to {after[1]!r}"
    return [Violation("spec.runtimeRef", f"{what}: {RECREATE}", severity="warning")]


RULE = Rule(
    "repointed",
    (REWRITE,),
    "trainjob",
    (),
    "a TrainJob rendered before whose runtimeRef this render changes (immutable on a live cluster)",
    _check,
)
