"""A move of the trainer containers' resources that changes ``spec.trainer.resourcesPerNode`` of a
TrainJob the function rendered before (its records say so; without records, as under kustomize or
Argo CD, the function cannot tell): ``spec.trainer`` is immutable (CEL ``self == oldSelf``,
``pkg/apis/trainer/v1alpha1/trainjob_types.go``, suspended or not), so a cluster that has the
TrainJob refuses the change."""

from __future__ import annotations

from typing import Any

from ..kube.merge import without_nulls
from ..resolve.context import TrainJobContext
from ..resolve.moving import by_value
from ..values.violations import Violation
from .framework import Rule
from .stages import REWRITE


def _check(context: TrainJobContext, _: Any) -> list[Violation]:
    if context.plan is None or not context.rendered_before:
        return []  # not materialized, or never rendered before
    topo = context.topo
    site = next((s for s in context.patched_sites if topo.is_trainer(*s.key)), None)
    if site is None:
        return []  # nothing moved
    moved = context.moved[0]
    if moved is None or by_value(moved) == by_value(without_nulls(context.per_node) or {}):
        return []
    return [
        Violation(
            site.resources_path,
            "this TrainJob was rendered before, and moving these resources changes its "
            "spec.trainer.resourcesPerNode: spec.trainer is immutable (CEL self == oldSelf, trainjob_types.go, "
            "suspended or not), so a cluster that has this TrainJob refuses the change: recreate the TrainJob "
            "(delete and apply; Argo CD: argocd.argoproj.io/sync-options: Force=true,Replace=true; README, "
            "Lifecycle on a live cluster)",
            severity="warning",
        )
    ]


RULE = Rule(
    "trainer-changed",
    (REWRITE,),
    "trainjob",
    (),
    "a move to resourcesPerNode that changes spec.trainer of a TrainJob rendered before",
    _check,
)
