"""A simulation of a future release: Trainer v2.3.0's TrainJob CRD with the two fields KEP-2782 adds to
``runtimePatches`` (kubeflow/trainer ``proposals/2782-dra-support/README.md``, merged as PR 3540; the
implementation, PR 4027, is open, and no release serves them):

- ``ContainerPatch.resources``, a ``corev1.ResourceRequirements`` (requests, limits, claims), on
  ``containers`` and ``initContainers`` (both are ``[]ContainerPatch``);
- ``PodSpecPatch.resourceClaims``, a ``[]corev1.PodResourceClaim`` with ``+listType=map``,
  ``+listMapKey=name`` and ``+kubebuilder:validation:MaxItems=32``.

The KEP reuses the ``corev1`` types, so their schemas are what controller-gen writes for them: taken from
the JobSet CRD beside it (``jobset.x-k8s.io_jobsets.yaml``, whose pod template is a whole
``corev1.PodSpec``), nothing written by hand but the KEP's MaxItems.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml

TRAINJOB_CRD = "trainer.kubeflow.org_trainjobs.yaml"
JOBSET_CRD = "jobset.x-k8s.io_jobsets.yaml"
MAX_CLAIMS = 32  # the KEP's +kubebuilder:validation:MaxItems=32 on PodSpecPatch.resourceClaims


def _pod_spec(schema: dict[str, Any], *path: str) -> dict[str, Any]:
    """The schema under ``path``: each name a property, ``[]`` a list's items."""
    node = schema
    for step in path:
        node = node["items"] if step == "[]" else node["properties"][step]
    return node


JOBSET_POD = ("spec", "replicatedJobs", "[]", "template", "spec", "template", "spec")
TRAINJOB_POD = (
    "spec",
    "runtimePatches",
    "[]",
    "trainingRuntimeSpec",
    "template",
    "spec",
    "replicatedJobs",
    "[]",
    "template",
    "spec",
    "template",
    "spec",
)


def simulated_crd(crds: Path) -> dict[str, Any]:
    """The TrainJob CRD of ``crds`` (a release's ``manifests/base/crds``, with JobSet's) with KEP-2782's fields."""
    crd: dict[str, Any] = yaml.safe_load((crds / TRAINJOB_CRD).read_text())
    jobset: dict[str, Any] = yaml.safe_load((crds / JOBSET_CRD).read_text())
    corev1 = _pod_spec(jobset["spec"]["versions"][0]["schema"]["openAPIV3Schema"], *JOBSET_POD)
    resources = corev1["properties"]["containers"]["items"]["properties"]["resources"]
    claims = copy.deepcopy(corev1["properties"]["resourceClaims"])
    claims["maxItems"] = MAX_CLAIMS
    claims.pop("x-kubernetes-validations", None)  # corev1's own immutability rule is the Pod's, not the patch's
    for version in crd["spec"]["versions"]:
        pod = _pod_spec(version["schema"]["openAPIV3Schema"], *TRAINJOB_POD)
        for field in ("containers", "initContainers"):
            pod["properties"][field]["items"]["properties"]["resources"] = copy.deepcopy(resources)
        pod["properties"]["resourceClaims"] = copy.deepcopy(claims)
    crd["metadata"].setdefault("annotations", {})["trainjob-resources.test/simulation"] = (
        "KEP-2782: runtimePatches ContainerPatch.resources and PodSpecPatch.resourceClaims (no release serves them)"
    )
    return crd
