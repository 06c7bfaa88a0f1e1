"""A runtime patch that changes a replicated job's role. Upstream Kubeflow Trainer (v2.3.0 and v2.2.1) decides
a job's role by one label, ``trainer.kubeflow.org/trainjob-ancestor-step`` (``LabelTrainJobAncestor``,
pkg/constants/constants.go), read on the job template's labels *after* the TrainJob's runtime patches are
merged into them: ``newRuntimeInfo`` (pkg/runtime/core/trainingruntime.go: the trainer's pod count and the
job ``resourcesPerNode`` sizes), the JobSet builder's ``Initializer`` and ``Trainer``
(pkg/runtime/framework/plugins/jobset/builder.go: the initializer and trainer jobs, one replica each, the
initializers' storageUri and env, the trainer's image, command and args), ``ExtractResourcePerNodeFromRuntime``
(pkg/runtime/runtime.go) and the torchtune plugin (pkg/runtime/framework/plugins/torch/torchtune.go). No
other label upstream reads decides a role: a container's role is its name and its list, which a
ContainerPatch cannot change; the runtime webhook reads the same label on the runtime
(pkg/webhooks/trainingruntime_webhook.go), never on a TrainJob.

So a patch that writes that label with another value than the runtime's turns one job into another:
a trainer relabelled ``dataset-initializer`` is an initializer to Trainer, and to a platform's
``maxPerRole`` caps, which the repository does not choose. Roles come from the runtime as installed: the
patch is refused. The label written with the runtime's own value changes nothing and passes. Where the
runtime is not in the bundle, nothing says what the label was, and any patch that writes it is refused.
The label on the JobSet's or a pod template's metadata is read by no one to decide a role and passes.
"""

from __future__ import annotations

from typing import Any

from ..resolve.context import TrainJobContext
from ..trainer.runtime_view import ANCESTOR_LABEL
from ..values import fieldpath
from ..values.violations import Violation
from .framework import Rule
from .stages import RUNTIME_FREE, TRAINJOB

_READ_BY = (
    "Kubeflow Trainer reads it on the job template after merging the patches to decide the job's role "
    "(newRuntimeInfo, pkg/runtime/core/trainingruntime.go; Initializer and Trainer, "
    "pkg/runtime/framework/plugins/jobset/builder.go)"
)


def _check(context: TrainJobContext, _: Any) -> list[Violation]:
    resolution = context.resolution
    if resolution is not None and resolution.foreign is not None:
        return []  # another API group's runtime: not Trainer's label to read
    entry = context.entry  # None in the runtime-free stage
    written: dict[str, str | None] | None = None
    if entry is not None:
        assert entry.model is not None
        written = {job.name: job.labels.get(ANCESTOR_LABEL) for job in entry.model.replicated_jobs}
    patches = context.trainjob.spec.runtime_patches or []
    out: list[Violation] = []
    for site in context.job_sites:
        spec = patches[site.patch_index].training_runtime_spec
        assert spec is not None and spec.template is not None and spec.template.spec is not None
        job = (spec.template.spec.replicated_jobs or [])[site.job_index]
        metadata = job.template.metadata if job.template is not None else None
        labels = metadata.labels if metadata is not None else None
        if not labels or ANCESTOR_LABEL not in labels:
            continue
        value = labels[ANCESTOR_LABEL]
        path = fieldpath.child(f"{site.path}.template.metadata.labels", ANCESTOR_LABEL)
        if written is None or entry is None:
            out.append(
                Violation(
                    path,
                    f"this patch sets {ANCESTOR_LABEL}: {value} on replicated job {site.job!r}, and the runtime is "
                    f"not in the bundle, so nothing shows it leaves the job's role as the runtime has it; "
                    f"{_READ_BY}. Remove the label from the patch (the runtime's own label decides the role)",
                    current_value=value,
                )
            )
            continue
        if site.job not in written:
            continue  # the job-site rule names a job the runtime lacks
        own = written[site.job]
        if value == own:
            continue
        was = f"{own!r}" if own is not None else "no role label"
        out.append(
            Violation(
                path,
                f"this patch sets {ANCESTOR_LABEL}: {value} on replicated job {site.job!r}, which {entry.display} "
                f"gives {was}: {_READ_BY}, so the patch would make the job a {value} job to Trainer and to the "
                "platform's policy. Roles come from the runtime: remove the label from the patch",
                current_value=value,
                proposed_value=own,
            )
        )
    return out


RULE = Rule(
    "role-labels",
    (RUNTIME_FREE, TRAINJOB),
    "trainjob",
    (),  # reads the TrainJob as written: never remembered
    "runtime patches that change the label upstream decides a replicated job's role by",
    _check,
)
