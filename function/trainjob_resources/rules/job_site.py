"""A patched replicated job the runtime does not have. Stricter than upstream on purpose:
``pkg/runtime/framework/plugins/jobset/jobset.go`` ``Validate`` checks that patched jobs exist in
the *merged* spec (``ValidateObjects``, ``pkg/runtime/core/trainingruntime.go``, runs
``newRuntimeInfo``, whose ``mergeRuntimePatches`` has added them already), so it admits a misspelt
name; here they must exist in the unpatched runtime."""

from __future__ import annotations

from ..resolve.context import TrainJobContext
from ..trainer.sites import JobPatchSite
from ..values.violations import Violation
from .framework import Rule
from .reads import JOB_SITES, RUNTIME
from .stages import PATCHES


def _check(context: TrainJobContext, site: JobPatchSite) -> list[Violation]:
    jobs = context.runtime.jobs
    if site.job in jobs:
        return []
    names = ", ".join(jobs) or "none"
    return [
        Violation(
            f"{site.path}.name",
            f"replicated job {site.job!r} is not in {context.runtime.display} (its replicated jobs: {names})",
            current_value=site.job,
        )
    ]


RULE = Rule(
    "job-site",
    (PATCHES,),
    "job-site",
    (RUNTIME, JOB_SITES),
    "runtimePatches naming a replicated job the runtime lacks",
    _check,
)
