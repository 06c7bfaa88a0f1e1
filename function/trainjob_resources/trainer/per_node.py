"""Moving a trainer container's patched resources to ``spec.trainer.resourcesPerNode`` without
changing the training topology, and the resourcesPerNode that upstream would ignore.

The plugins count devices from ``TrainJob.spec.trainer.resourcesPerNode`` *instead of* the
runtime's node container when it is set (``pkg/runtime/runtime.go``
``ExtractResourcePerNodeFromRuntime``, ``GetNumGPUPerNode``;
``pkg/runtime/framework/plugins/torch/torch.go`` ``EnforceMLPolicy`` and ``getNumCPUPerNode``;
``pkg/runtime/framework/plugins/torch/torchtune.go`` ``validateTorchTune``, ``getRecipeAndConfig``;
``pkg/runtime/framework/plugins/mpi/mpi.go`` and ``pkg/runtime/framework/plugins/xgboost/xgboost.go``
``EnforceMLPolicy``). So when moving creates ``resourcesPerNode``, it carries over the keys those
plugins read (every resource whose name contains ``gpu``, and ``cpu``) from the runtime's node
container, where the patch does not set them. A ``resourcesPerNode`` the user already wrote is
what the plugins read already: nothing is added to it. Where ``resourcesPerNode`` would be
ignored (a runtime without ``mlPolicy``) there is no trainer container, so nothing moves, and a
``resourcesPerNode`` the user wrote is an error.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from ..kube.merge import DIRECTIVE, compose_patches, merge_requirements
from ..values import fieldpath
from ..values.violations import Violation
from .effective import RESOURCES_PER_NODE_PATH
from .runtime_view import ANCESTOR_LABEL, TRAINER_ANCESTOR, TRAINER_CONTAINER, JobInfo, RuntimeSpec
from .sites import ContainerSite
from .topology import MPI_NODE_JOB, Topology


def read_by_plugins(name: str) -> bool:
    """A resource the plugins read from resourcesPerNode: ``numGPU`` (any name containing "gpu") and cpu."""
    return "gpu" in name.lower() or name == "cpu"


def runtime_node_resources(runtime: RuntimeSpec, jobs: Mapping[str, JobInfo], topo: Topology) -> dict[str, Any]:
    """``ExtractResourcePerNodeFromRuntime``: the ``node`` container of the first job named ``node``
    or labelled ``trainer`` (patched labels) that has resources."""
    for job in runtime.replicated_jobs:
        if job.name != MPI_NODE_JOB and topo.ancestor(job.name) != TRAINER_ANCESTOR:
            continue
        info = jobs.get(job.name)
        container = info.containers.get(("containers", TRAINER_CONTAINER)) if info else None
        if container is not None and container.resources:
            return container.resources
    return {}


def moved_resources(
    patches: Iterable[Mapping[str, Any]], existing: Mapping[str, Any] | None, runtime_node: Mapping[str, Any]
) -> tuple[dict[str, Any] | None, str | None]:
    """The ``resourcesPerNode`` equal to the trainer patches, or why there is none."""
    patch: dict[str, Any] = {}
    for one in patches:
        patch = compose_patches(patch, one)
    if _has_deletion(patch):
        return None, (
            "it deletes a value (null or $patch: replace), which resourcesPerNode cannot do: the API server "
            "prunes nulls there and the runtime's value stays; change the runtime, or set the value you want"
        )
    stay = _claims_kept(patch, runtime_node)
    if stay:
        return None, (
            f"its claims replace the container's, but resourcesPerNode merges claims by name, so the runtime's "
            f"claims {', '.join(stay)} would stay; change the runtime, or claim them too"
        )
    if existing is None:
        carried: dict[str, Any] = {}
        for section in ("limits", "requests"):
            values = runtime_node.get(section)
            own = patch.get(section) or {}
            kept = {k: v for k, v in (values or {}).items() if read_by_plugins(k) and k not in own}
            if kept:
                carried[section] = kept
        patch = merge_requirements(carried, patch)
    return merge_requirements(merge_requirements(None, patch), existing, claims_by_name=True), None


def _claims_kept(patch: Mapping[str, Any], runtime_node: Mapping[str, Any]) -> list[str]:
    """The runtime's claims that a patch's ``claims`` remove but resourcesPerNode would keep."""
    claims = patch.get("claims")
    if not isinstance(claims, list):
        return []
    named = {c.get("name") for c in claims if isinstance(c, Mapping)}
    runtime = runtime_node.get("claims")
    return [str(c.get("name")) for c in runtime or [] if isinstance(c, Mapping) and c.get("name") not in named]


def _has_deletion(patch: Mapping[str, Any]) -> bool:
    for key, value in patch.items():
        if value is None:
            return True
        if (
            key in ("limits", "requests")
            and isinstance(value, Mapping)
            and (DIRECTIVE in value or any(v is None for v in value.values()))
        ):
            return True
    return False


def ignored_per_node(runtime: RuntimeSpec, per_node: Mapping[str, Any] | None, display: str) -> list[Violation]:
    """``newRuntimeInfo`` merges resourcesPerNode only when the runtime has an mlPolicy."""
    if per_node is None or runtime.ml_policy is not None:
        return []
    labelled = [j.name for j in runtime.replicated_jobs if j.labels.get(ANCESTOR_LABEL) == TRAINER_ANCESTOR]
    where = f"replicated job {labelled[0]!r}" if labelled else "the trainer's replicated job"
    return [
        Violation(
            RESOURCES_PER_NODE_PATH,
            f"{display} has no mlPolicy, so Kubeflow Trainer ignores spec.trainer.resourcesPerNode "
            f"(newRuntimeInfo): size the node container of {where} with resources in a runtimePatches "
            "ContainerPatch instead, or use a runtime with an mlPolicy",
        )
    ]


def pruned_nulls(per_node: Mapping[str, Any] | None, sites: Iterable[ContainerSite], native: bool) -> list[Violation]:
    """A ``null`` the API server prunes (resourcesPerNode; every ``resources`` in ``native`` mode): it
    deletes nothing, the runtime's value stays (see ``merge``)."""
    found = list(_nulls(per_node, RESOURCES_PER_NODE_PATH))
    if native:
        for site in sites:
            found += _nulls(site.resources, site.resources_path)
    return [
        Violation(
            path,
            "null deletes nothing here: the API server prunes it from this typed field, so the runtime's "
            "value stays (remove it, or change the runtime)",
            severity="warning",
        )
        for path in found
    ]


def _nulls(value: Mapping[str, Any] | None, path: str) -> Iterator[str]:
    for key, child in (value or {}).items():
        if child is None:
            yield fieldpath.child(path, key)
        elif isinstance(child, Mapping):
            yield from (fieldpath.child(fieldpath.child(path, key), k) for k, v in child.items() if v is None)
