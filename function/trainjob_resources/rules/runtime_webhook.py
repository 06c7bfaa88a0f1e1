"""What upstream's runtime webhooks refuse on create (``validateReplicatedJobs``,
``pkg/webhooks/trainingruntime_webhook.go``, also run by ``clustertrainingruntime_webhook.go``):
a job labelled trainer or initializer with ``replicas`` other than 1 (the CRD defaults it to 1),
or without its required container. A derived runtime keeps the base's jobs and labels but never
the label ``trainer.kubeflow.org/webhook-validation: disabled``, so a base that only passed with
it makes a derived runtime the cluster refuses. Whether the release has that label's selector
(``TrainerRelease.webhook_selector``; Trainer v2.2 has none: there the base was let in before the
webhook ran, or not at all) decides whether the finding says so."""

from __future__ import annotations

from typing import Any

from ..resolve.context import TrainJobContext
from ..trainer.runtime_view import ANCESTOR_LABEL, TRAINER_ANCESTOR, TRAINER_CONTAINER
from ..values.violations import Violation
from .framework import Rule
from .stages import DERIVE

# validateReplicatedJobs: the container each ancestor's job must have.
_REQUIRED_CONTAINERS = {
    TRAINER_ANCESTOR: TRAINER_CONTAINER,
    "model-initializer": "model-initializer",
    "dataset-initializer": "dataset-initializer",
}


def _check(context: TrainJobContext, _: Any) -> list[Violation]:
    entry = context.runtime
    assert entry.model is not None
    out: list[Violation] = []
    for job in entry.model.replicated_jobs:
        ancestor = job.labels.get(ANCESTOR_LABEL)
        required = _REQUIRED_CONTAINERS.get(ancestor) if ancestor is not None else None
        if required is None:
            continue
        why = (
            f"the derived {context.kind} would be refused by Kubeflow Trainer's runtime webhook "
            f"(validateReplicatedJobs, pkg/webhooks/trainingruntime_webhook.go): replicated job {job.name!r} of "
            f"{entry.display}, labelled {ANCESTOR_LABEL}: {ancestor}"
        )
        replicas = 1 if job.replicas is None else job.replicas
        if replicas != 1:
            out.append(Violation("spec.runtimeRef", f"{why}, has replicas {replicas}: it must always be 1"))
        if all(c.name != required for c in job.containers):
            out.append(Violation("spec.runtimeRef", f"{why}, has no container {required!r}, which it must have"))
    if out and context.release.webhook_selector:
        out[-1] = Violation(
            out[-1].path,
            out[-1].message + " (the label trainer.kubeflow.org/webhook-validation: disabled, which a derived "
            "runtime never carries, is what let the base in): fix the base runtime",
        )
    return out


RULE = Rule(
    "runtime-webhook",
    (DERIVE,),
    "trainjob",
    (),
    "derived runtimes the runtime webhook would refuse",
    _check,
)
