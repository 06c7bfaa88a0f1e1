"""A patched replicated job the runtime does not have (``validate_job_site``)."""

from __future__ import annotations

from typing import Any

from ...values.violations import Violation
from ..context import TrainJobContext
from ..validate import validate_job_site
from .framework import Rule
from .reads import JOB_SITES, RUNTIME
from .stages import PATCHES


def _check(context: TrainJobContext, site: Any) -> list[Violation]:
    return validate_job_site(site, context.runtime.jobs, context.runtime.display)


RULE = Rule(
    "job-site",
    (PATCHES,),
    "job-site",
    (RUNTIME, JOB_SITES),
    "runtimePatches naming a replicated job the runtime lacks",
    _check,
)
