"""A TrainJob on a Flux runtime without ``spec.trainer.numNodes``: Kubeflow Trainer v2.3.0's flux
plugin reads ``spec.trainer`` and ``*spec.trainer.numNodes`` without checking them
(``brokerSettingsFromEnvironment`` and ``generateInitEntrypoint``, pkg/runtime/framework/plugins/flux/flux.go),
so the controller fails at every reconcile and no JobSet is made (seen on the control plane:
tests/cluster/test_move_and_order.py). Refused at render, where it can be fixed."""

from __future__ import annotations

from typing import Any

from ..resolve.context import TrainJobContext
from ..values.violations import Violation
from .framework import Rule
from .stages import TRAINJOB


def _check(context: TrainJobContext, _: Any) -> list[Violation]:
    runtime = context.runtime
    policy = runtime.model.ml_policy if runtime.model is not None else None
    trainer = context.trainjob.spec.trainer
    if policy is None or "flux" not in policy.policies or (trainer is not None and trainer.num_nodes is not None):
        return []
    return [
        Violation(
            "spec.trainer.numNodes" if trainer is not None else "spec",
            f"{runtime.display} is a Flux runtime (mlPolicy.flux), and Kubeflow Trainer's flux plugin reads "
            "spec.trainer.numNodes without checking it is set (generateInitEntrypoint, "
            "pkg/runtime/framework/plugins/flux/flux.go): without it the controller fails at every reconcile and "
            "makes no JobSet. Set spec.trainer.numNodes",
        )
    ]


RULE = Rule(
    "flux-num-nodes",
    (TRAINJOB,),
    "trainjob",
    (),  # reads spec.trainer as written: never remembered
    "a TrainJob on a Flux runtime without spec.trainer.numNodes",
    _check,
)
