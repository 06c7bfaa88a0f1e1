"""In ``native`` mode, a ``node`` container patch beside ``spec.trainer.resourcesPerNode``: KEP-2782
(kubeflow/trainer ``proposals/2782-dra-support/README.md``, ``ContainerPatch.Resources``' doc: "For the node
container, trainer.resourcesPerNode takes precedence for requests and limits"; the KEP's
pkg/runtime/core/trainingruntime.go "merge resourcesPerNode and claims by name") keeps the patch and
lets resourcesPerNode win name by name: a patched value resourcesPerNode also sets never reaches a pod
(a warning, as the KEP accepts the TrainJob), the patch's other names and its claims do. Claims in
resourcesPerNode itself the KEP's webhook rejects ("Reject trainer.resourcesPerNode.claims"): an error.
Outside native mode ``shadowed-by-resources-per-node`` says what the derived runtime keeps."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..resolve.context import TrainJobContext
from ..trainer.effective import RESOURCES_PER_NODE_PATH
from ..trainer.sites import ContainerSite
from ..values import fieldpath
from ..values.violations import Violation
from .framework import Rule
from .pod_claims import KEP
from .reads import CONTAINER_SITES, MODE, PATCHED_RESOURCES, RESOURCES_PER_NODE, TOPOLOGY
from .shadowed_by_per_node import overridden
from .stages import PATCHES


def _check(context: TrainJobContext, site: ContainerSite) -> list[Violation]:
    per_node = context.per_node
    if not context.native or site.resources is None or not isinstance(per_node, Mapping):
        return []
    if not context.topo.is_trainer(*site.key):
        return []
    return [
        Violation(
            fieldpath.child(fieldpath.child(site.resources_path, section), name),
            f"{section}.{name} {value} of the node container {site.name!r} of replicated job {site.job!r} "
            f"never reaches a pod: {RESOURCES_PER_NODE_PATH}.{section}.{name} is {kept}, and by {KEP} "
            "resourcesPerNode takes precedence over a ContainerPatch for the node container's requests "
            "and limits. Write the value once",
            severity="warning",
            current_value=value,
        )
        for section, name, value, kept in overridden(site.resources, per_node)
    ]


def _per_node_claims(context: TrainJobContext, _: Any) -> list[Violation]:
    per_node = context.per_node
    claims = per_node.get("claims") if context.native and isinstance(per_node, Mapping) else None
    if not claims:
        return []
    return [
        Violation(
            fieldpath.child(RESOURCES_PER_NODE_PATH, "claims"),
            f"{KEP}: Trainer's webhook rejects claims in resourcesPerNode; claim the device with a "
            "PodSpecPatch's resourceClaims and the container's resources.claims in runtimePatches",
            current_value=claims,
        )
    ]


RULE = Rule(
    "native-per-node",
    (PATCHES,),
    "container-site",
    (MODE, CONTAINER_SITES, PATCHED_RESOURCES, RESOURCES_PER_NODE, TOPOLOGY),
    "native mode: node patch values resourcesPerNode takes precedence over (KEP-2782)",
    _check,
)

CLAIMS_RULE = Rule(
    "native-per-node-claims",
    (PATCHES,),
    "trainjob",
    (MODE, RESOURCES_PER_NODE),
    "native mode: claims in resourcesPerNode, which KEP-2782's webhook rejects",
    _per_node_claims,
)
