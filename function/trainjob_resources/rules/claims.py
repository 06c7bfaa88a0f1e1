"""A patched container claim must name an entry of the pod's ``resourceClaims`` (Kubernetes' pod
validation, pkg/apis/core/validation/validation.go ``validateResourceClaimNames``); a
``PodSpecPatch`` cannot add one, so the runtime's pod template has to have it. In ``native`` mode
``native_claims`` checks instead: KEP-2782's PodSpecPatch can add one."""

from __future__ import annotations

from collections.abc import Mapping

from ..resolve.context import TrainJobContext
from ..trainer.sites import ContainerSite
from ..values.violations import Violation
from .framework import Rule
from .reads import CONTAINER_SITES, MODE, PATCHED_RESOURCES, RUNTIME
from .stages import PATCHES


def _check(context: TrainJobContext, site: ContainerSite) -> list[Violation]:
    claims = (site.resources or {}).get("claims")
    if context.native or not isinstance(claims, list):
        return []
    runtime = context.runtime
    assert runtime.model is not None
    job = next((j for j in runtime.model.replicated_jobs if j.name == site.job), None)
    if job is None:
        return []
    pod_claims = job.pod_spec.get("resourceClaims")
    names = {c.get("name") for c in pod_claims if isinstance(c, Mapping)} if isinstance(pod_claims, list) else set()
    out: list[Violation] = []
    for i, claim in enumerate(claims):
        name = claim.get("name") if isinstance(claim, Mapping) else None
        if isinstance(name, str) and name and name not in names:
            have = ", ".join(sorted(str(n) for n in names)) or "none"
            out.append(
                Violation(
                    f"{site.resources_path}.claims[{i}].name",
                    f"must be the name of one of the pod's resourceClaims: replicated job {site.job!r} of "
                    f"{runtime.display} has {have} (spec.template.spec.resourceClaims, which a runtimePatch cannot "
                    "add); the API server refuses the pod",
                    current_value=name,
                )
            )
    return out


RULE = Rule(
    "claims",
    (PATCHES,),
    "container-site",
    (MODE, RUNTIME, CONTAINER_SITES, PATCHED_RESOURCES),
    "resource claims the pod does not declare",
    _check,
)
