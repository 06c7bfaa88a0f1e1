"""The pod-level claims a TrainJob's patches add: ``PodSpecPatch.resourceClaims``, KEP-2782's field
(kubeflow/trainer ``proposals/2782-dra-support/README.md``, "Escape hatch: PodSpecPatch.ResourceClaims and
ContainerPatch.Resources"). No release serves it: outside ``native`` mode it is refused (v2.3.0's CRD has no
such field, and the function has no runtime to move it into). In ``native`` mode each entry is checked as
the KEP declares it and as Kubernetes validates a pod's claims: ``[]corev1.PodResourceClaim`` with
``+listType=map``, ``+listMapKey=name`` and ``+kubebuilder:validation:MaxItems=32``; a name that is a DNS
label, and exactly one of ``resourceClaimName`` and ``resourceClaimTemplateName``
(pkg/apis/core/validation/validation.go, ``validatePodResourceClaim``)."""

from __future__ import annotations

from collections.abc import Hashable, Iterator, Mapping
from typing import Any, Final

from ..kube.resource_rules import dns_label_violations
from ..resolve.context import TrainJobContext
from ..values import fieldpath
from ..values.violations import Violation
from .framework import Read, Rule
from .reads import JOB_SITES, MODE
from .stages import PATCHES

MAX_CLAIMS: Final = 32  # the KEP's +kubebuilder:validation:MaxItems=32
SOURCES: Final = ("resourceClaimName", "resourceClaimTemplateName")
KEP: Final = "KEP-2782 (kubeflow/trainer proposals/2782-dra-support)"


def pod_claims(context: TrainJobContext) -> Iterator[tuple[str, str, Any]]:
    """(replicated job, field path, the value written) of each ``resourceClaims`` of a PodSpecPatch, in
    patch order."""
    for site in context.job_sites:
        pod = _at(context.raw, "spec", "runtimePatches", site.patch_index, "trainingRuntimeSpec", "template", "spec")
        pod = _at(pod, "replicatedJobs", site.job_index, "template", "spec", "template", "spec")
        if isinstance(pod, Mapping) and "resourceClaims" in pod:
            yield site.job, f"{site.path}.template.spec.template.spec.resourceClaims", pod["resourceClaims"]


def _at(value: Any, *keys: str | int) -> Any:
    for key in keys:
        if isinstance(key, int):
            value = value[key] if isinstance(value, list) and 0 <= key < len(value) else None
        else:
            value = value.get(key) if isinstance(value, Mapping) else None
    return value


def _key(context: TrainJobContext, _: Any) -> Hashable:
    return repr(list(pod_claims(context)))


POD_CLAIMS: Final = Read("pod claims patched", _key)


def _check(context: TrainJobContext, _: Any) -> list[Violation]:
    out: list[Violation] = []
    for _job, path, claims in pod_claims(context):
        if not context.native:
            out.append(
                Violation(
                    path,
                    f"resourceClaims in a PodSpecPatch is {KEP}'s field, which no Trainer release serves "
                    "(v2.3.0's CRD has none: the API server refuses the TrainJob, or drops the field), and a "
                    "derived runtime cannot take it: declare the claim in the runtime's pod template, or use "
                    "mode: native on a cluster whose TrainJob CRD has the field (trainjob-resources check says which)",
                    current_value=claims,
                )
            )
            continue
        out += _entries(claims, path)
    return out


def _entries(claims: Any, path: str) -> list[Violation]:
    if not isinstance(claims, list):
        return [Violation(path, "must be a list of pod resource claims", current_value=claims)]
    out: list[Violation] = []
    if len(claims) > MAX_CLAIMS:
        out.append(
            Violation(path, f"must have at most {MAX_CLAIMS} items ({KEP}: MaxItems)", current_value=len(claims))
        )
    seen: set[str] = set()
    for i, claim in enumerate(claims):
        where = fieldpath.index(path, i)
        if not isinstance(claim, Mapping):
            out.append(Violation(where, "must be a pod resource claim (name, and a claim or template)"))
            continue
        name = claim.get("name")
        if not isinstance(name, str) or not name:
            out.append(Violation(fieldpath.child(where, "name"), "required: the claim's name, which containers name"))
        else:
            out += dns_label_violations(name, fieldpath.child(where, "name"))
            if name in seen:
                out.append(
                    Violation(
                        fieldpath.child(where, "name"),
                        "duplicate name: resourceClaims is a map keyed by name (the KEP's listMapKey=name)",
                        current_value=name,
                    )
                )
            seen.add(name)
        given = [s for s in SOURCES if claim.get(s)]
        if len(given) != 1:
            out.append(
                Violation(
                    where,
                    "must set exactly one of resourceClaimName and resourceClaimTemplateName (Kubernetes' pod "
                    f"validation, validatePodResourceClaim){'' if given else ': neither is set'}",
                )
            )
    return out


RULE = Rule(
    "pod-claims",
    (PATCHES,),
    "trainjob",
    (MODE, JOB_SITES, POD_CLAIMS),
    "pod-level resourceClaims in a PodSpecPatch (KEP-2782): native mode only, checked as the KEP declares them",
    _check,
)
