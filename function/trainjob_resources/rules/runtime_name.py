"""What upstream reads from the runtime's *name* or *labels*, which a derived runtime changes.

Every such reader in kubeflow/trainer (``pkg/``) and the Kubeflow SDK (``kubeflow/trainer``):

- ``pkg/runtime/framework/plugins/torch/torchtune.go`` ``getModelFromRuntimeRef``: with
  ``spec.trainer.command: [tune, run]`` and an ``mlPolicy.torch`` runtime, the model comes from
  ``runtimeRef.name`` split on ``-`` into exactly three fields (``torchtune-llama3.2-1b``). A
  derived runtime's name (``<base>-<hash>``) has four, so the webhook refuses the TrainJob ("must
  have a supported pretrained model"): the function refuses it first, saying what to do.
- ``pkg/runtime/core/clustertrainingruntime.go`` ``ValidateObjects`` warns about a
  ClusterTrainingRuntime labelled ``trainer.kubeflow.org/support: deprecated``
  (``pkg/util/trainingruntime/trainingruntime.go`` ``IsSupportDeprecated``); a derived runtime keeps
  the base's labels, but a derived *TrainingRuntime* is never checked: the function repeats the warning.
- Labels the controller reads on replicated jobs (``trainjob-ancestor-step``) are in the spec,
  which a derived runtime copies; the runtime's own labels, which the SDK reads
  (``trainer.kubeflow.org/framework`` in ``backends/kubernetes/backend.py`` ``list_runtimes``,
  ``get_runtime``), are copied too. Two SDK effects remain, documented in the README: ``list_runtimes``
  also lists derived runtimes, and ``list_jobs(runtime=base)`` (which compares ``runtimeRef.name``)
  no longer lists a TrainJob that points at a derived runtime.
"""

from __future__ import annotations

from typing import Any

from ..resolve.context import TrainJobContext
from ..trainer.api import CLUSTER_RUNTIME_KIND, NAMESPACED_RUNTIME_KIND
from ..values.violations import Violation
from ..yamltext import yamlnodes as yn
from .framework import Rule
from .stages import DERIVE

TORCHTUNE_ENTRYPOINT = ["tune", "run"]  # pkg/constants/constants.go TorchTuneEntrypoint
SUPPORT_LABEL = "trainer.kubeflow.org/support"
SUPPORT_DEPRECATED = "deprecated"


def _check(context: TrainJobContext, _: Any) -> list[Violation]:
    """For a TrainJob that materialization points at a derived runtime of ``context.kind``."""
    assert context.plan is not None
    entry = context.runtime
    out: list[Violation] = []
    trainer = context.trainjob.spec.trainer
    command = (trainer.model_extra or {}).get("command") if trainer is not None else None
    ml_policy = entry.model.ml_policy if entry.model is not None else None
    if command == TORCHTUNE_ENTRYPOINT and ml_policy is not None and ml_policy.torch:
        effective = context.plan.effective
        folded = (s.resources_path for s in context.sites if s.resources is not None and s.key in effective)
        out.append(
            Violation(
                next(folded, "spec.runtimeRef"),
                "Kubeflow Trainer reads the torchtune model from runtimeRef.name (torchtune.go getModelFromRuntimeRef: "
                f"three '-'-separated fields, as in {entry.cluster_name!r}), so the "
                "derived runtime's name would make it refuse this TrainJob ('must have a supported pretrained "
                "model'): size these containers in the runtime itself (or a copy of it with a name of that "
                "form), or take resources out of this TrainJob's runtimePatches",
            )
        )
    labels = yn.get_path(entry.item.node, "metadata", "labels")
    support = yn.scalar(yn.get(labels, SUPPORT_LABEL)) if labels is not None else None
    if (
        entry.item.kind == CLUSTER_RUNTIME_KIND
        and context.kind == NAMESPACED_RUNTIME_KIND
        and support == SUPPORT_DEPRECATED
    ):
        out.append(
            Violation(
                "spec.runtimeRef",
                f"Referenced ClusterTrainingRuntime {entry.cluster_name!r} is deprecated and will be removed in a "
                "future release of Kubeflow Trainer (its label trainer.kubeflow.org/support: deprecated); "
                "Kubeflow Trainer warns about it only for a ClusterTrainingRuntime, not for the derived "
                "TrainingRuntime this TrainJob now uses",
                severity="warning",
            )
        )
    return out


RULE = Rule(
    "runtime-name",
    (DERIVE,),
    "trainjob",
    (),
    "TrainJobs that upstream reads by their runtime's name, which a derived runtime changes",
    _check,
)
