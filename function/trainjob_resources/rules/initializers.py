"""``pkg/runtime/framework/plugins/jobset/jobset.go`` ``Validate``: a TrainJob with
``spec.initializer.dataset`` (``model``) needs a replicated job ``dataset-initializer``
(``model-initializer``) with a container of that name that mounts the volume ``initializer``, in the
runtime as the TrainJob's patches make it (ContainerPatch ``volumeMounts`` count). The volume mount is
v2.3.0's rule: v2.2.x needs the job and the container only (``trainer/releases.py``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..resolve.context import TrainJobContext
from ..trainer.releases import release
from ..trainer.runtime_view import RuntimeContainerView
from ..trainer.sites import ContainerSite
from ..values.violations import Violation
from .framework import Rule
from .stages import TRAINJOB

INITIALIZER_VOLUME = "initializer"  # pkg/runtime/framework/plugins/jobset/constants/constants.go


def _check(context: TrainJobContext, _: Any) -> list[Violation]:
    initializer = (context.raw.get("spec") or {}).get("initializer")
    if not isinstance(initializer, Mapping):
        return []
    runtime = context.runtime
    assert runtime.model is not None
    out: list[Violation] = []
    mount_rule = release(context.config.trainer_version).initializer_volume_rule
    jobs = {job.name: job for job in runtime.model.replicated_jobs}
    for key, name in (("dataset", "dataset-initializer"), ("model", "model-initializer")):
        if initializer.get(key) is None:
            continue
        job = jobs.get(name)
        container = next((c for c in job.containers if c.name == name), None) if job is not None else None
        if job is None:
            problem = f"must have {name} job when trainJob is configured with input {key}Config"
        elif container is None:
            problem = f"must have container with name - {name} in the {name} job"
        elif not mount_rule or _mounts_initializer(container, context.sites, name):
            continue
        else:
            problem = f"must have volumeMount with name - {INITIALIZER_VOLUME} in container {name} of the {name} job"
        out.append(
            Violation(
                "spec.runtimeRef",
                f"{runtime.display} {problem} (spec.initializer.{key} is set; jobset.go Validate, "
                "pkg/runtime/framework/plugins/jobset/jobset.go)",
            )
        )
    return out


def _mounts_initializer(container: RuntimeContainerView, sites: list[ContainerSite], name: str) -> bool:
    mounts = set(container.mounts)
    for site in sites:
        if site.job == name and site.container_list == "containers" and site.name == name:
            mounts |= {str(m.get("name")) for m in site.patch.volume_mounts or [] if isinstance(m, Mapping)}
    return INITIALIZER_VOLUME in mounts


RULE = Rule(
    "initializers",
    (TRAINJOB,),
    "trainjob",
    (),  # reads spec.initializer as written: never remembered
    "dataset and model initializers without their job, container or volume mount",
    _check,
)
