"""In ``native`` mode, a patched container claim must name a pod-level claim of the merged pod spec: the
runtime's ``resourceClaims`` or one a ``PodSpecPatch`` of the TrainJob adds for that replicated job.
KEP-2782 (kubeflow/trainer ``proposals/2782-dra-support/README.md``, "Validation": "Reject a container
resources.claims entry (set via ContainerPatch.Resources) whose name does not match any pod-level
resourceClaims entry in the merged PodSpec"; the KEP puts the check in
pkg/runtime/framework/plugins/jobset/jobset.go), as Kubernetes' pod validation would later
(pkg/apis/core/validation/validation.go, ``validateResourceClaimNames``). Outside native mode the
``claims`` rule checks against the runtime's claims alone, since no release lets a patch add one."""

from __future__ import annotations

from collections.abc import Mapping

from ..resolve.context import TrainJobContext
from ..trainer.sites import ContainerSite
from ..values.violations import Violation
from .framework import Rule
from .pod_claims import KEP, POD_CLAIMS, pod_claims
from .reads import CONTAINER_SITES, JOB_SITES, MODE, PATCHED_RESOURCES, RUNTIME
from .stages import PATCHES


def _check(context: TrainJobContext, site: ContainerSite) -> list[Violation]:
    claims = (site.resources or {}).get("claims")
    if not context.native or not isinstance(claims, list):
        return []
    runtime = context.runtime
    assert runtime.model is not None
    job = next((j for j in runtime.model.replicated_jobs if j.name == site.job), None)
    if job is None:
        return []
    from_runtime = _names(job.pod_spec.get("resourceClaims"))
    patched = {name for j, _, value in pod_claims(context) if j == site.job for name in _names(value)}
    have = from_runtime | patched
    out: list[Violation] = []
    for i, claim in enumerate(claims):
        name = claim.get("name") if isinstance(claim, Mapping) else None
        if isinstance(name, str) and name and name not in have:
            listed = ", ".join(sorted(have)) or "none"
            out.append(
                Violation(
                    f"{site.resources_path}.claims[{i}].name",
                    f"must name a pod-level claim of replicated job {site.job!r}: the merged pod spec has {listed} "
                    f"({runtime.display}'s resourceClaims and the PodSpecPatches' of this TrainJob). {KEP}: "
                    "Trainer rejects a container claim with no pod-level claim of that name; add it to the "
                    "PodSpecPatch's resourceClaims",
                    current_value=name,
                )
            )
    return out


def _names(claims: object) -> set[str]:
    if not isinstance(claims, list):
        return set()
    return {c["name"] for c in claims if isinstance(c, Mapping) and isinstance(c.get("name"), str)}


RULE = Rule(
    "native-claims",
    (PATCHES,),
    "container-site",
    (MODE, RUNTIME, CONTAINER_SITES, PATCHED_RESOURCES, JOB_SITES, POD_CLAIMS),
    "native mode: container claims naming no pod-level claim of the merged pod spec (KEP-2782)",
    _check,
)
