"""Moving a trainer container's patched resources to ``spec.trainer.resourcesPerNode`` without
changing the training topology (``resolve/moving.py``; what the rules say of a resourcesPerNode
the user wrote is in ``rules/``: ``ignored_per_node``, ``dropped_claims``, ``pruned_nulls``).

The plugins count devices from ``TrainJob.spec.trainer.resourcesPerNode`` *instead of* the
runtime's node container when it is set (``pkg/runtime/runtime.go``
``ExtractResourcePerNodeFromRuntime``, ``GetNumGPUPerNode``;
``pkg/runtime/framework/plugins/torch/torch.go`` ``EnforceMLPolicy`` and ``getNumCPUPerNode``;
``pkg/runtime/framework/plugins/torch/torchtune.go`` ``validateTorchTune``, ``getRecipeAndConfig``;
``pkg/runtime/framework/plugins/mpi/mpi.go`` and ``pkg/runtime/framework/plugins/xgboost/xgboost.go``
``EnforceMLPolicy``). So when moving creates ``resourcesPerNode``, it carries over the keys those
plugins read (every resource whose name contains ``gpu``, and ``cpu``) from the container the
plugins read (``reading_job``), where the patch does not set them; where that container is not
one that resourcesPerNode sizes (``reader_differs``), or the move would drop claims
(``newRuntimeInfo`` keeps only limits and requests), nothing moves. A ``resourcesPerNode`` the user already wrote is
what the plugins read already: nothing is added to it. Where ``resourcesPerNode`` would be
ignored (a runtime without ``mlPolicy``) there is no trainer container, so nothing moves.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ..kube.merge import DIRECTIVE, compose_patches, merge_requirements
from .runtime_view import TRAINER_ANCESTOR, TRAINER_CONTAINER, JobInfo, RuntimeSpecView
from .topology import MPI_NODE_JOB, Topology


def read_by_plugins(name: str) -> bool:
    """A resource the plugins read from resourcesPerNode: ``numGPU`` (any name containing "gpu") and cpu."""
    return "gpu" in name.lower() or name == "cpu"


def reading_job(runtime: RuntimeSpecView, jobs: Mapping[str, JobInfo], topo: Topology) -> str | None:
    """The job whose ``node`` container the plugins read when resourcesPerNode is not set
    (``ExtractResourcePerNodeFromRuntime``): the first, in runtime order, that is *named* ``node``
    or whose patched ancestor label is ``trainer``, and has a ``node`` container, with resources or
    without (``pkg/apply/apply.go`` ``FromTypedObjWithFields`` turns every typed container's
    resources into ``{}``, never nil, so a container without resources is read as empty)."""
    for job in runtime.replicated_jobs:
        if job.name != MPI_NODE_JOB and topo.ancestor(job.name) != TRAINER_ANCESTOR:
            continue
        info = jobs.get(job.name)
        if info is not None and ("containers", TRAINER_CONTAINER) in info.containers:
            return job.name
    return None


def runtime_node_resources(runtime: RuntimeSpecView, jobs: Mapping[str, JobInfo], topo: Topology) -> dict[str, Any]:
    """The limits and requests of the container ``reading_job`` names (upstream copies no claims)."""
    job = reading_job(runtime, jobs, topo)
    if job is None:
        return {}
    resources = jobs[job].containers[("containers", TRAINER_CONTAINER)].resources
    return {k: v for k, v in resources.items() if k in ("limits", "requests")}


def reader_differs(runtime: RuntimeSpecView, jobs: Mapping[str, JobInfo], topo: Topology) -> str | None:
    """Why a move would change a container the patch does not size: resourcesPerNode is merged into
    the trainer containers (``newRuntimeInfo``) but read by the plugins *in place of* another job's
    ``node`` container (``ExtractResourcePerNodeFromRuntime``), as on an MPI runtime without
    ``runLauncherAsNode``, whose launcher is the trainer and whose ``node`` job the workers."""
    job = reading_job(runtime, jobs, topo)
    if job is None or job in topo.trainers:
        return None
    trainers = ", ".join(repr(t) for t in sorted(topo.trainers))
    return (
        f"Kubeflow Trainer merges resourcesPerNode into the node container of replicated job {trainers} "
        f"(newRuntimeInfo), but its plugins read resourcesPerNode in place of the node container of "
        f"replicated job {job!r} (ExtractResourcePerNodeFromRuntime, pkg/runtime/runtime.go): a resourcesPerNode "
        f"carrying the GPUs and cpu of {job!r} would give them to {trainers} too, and one without them would "
        f"change what the plugins count for {job!r} (devices, slots, processes per node); size these containers in the "
        "runtime, or set mlPolicy.mpi.runLauncherAsNode where the launcher is meant to be a node"
    )


def moved_resources(
    patches: Iterable[Mapping[str, Any]],
    existing: Mapping[str, Any] | None,
    runtime_node: Mapping[str, Any],
    runtime_claims: Iterable[str] = (),
    replaces: bool = False,
) -> tuple[dict[str, Any] | None, str | None]:
    """The ``resourcesPerNode`` equal to the trainer patches, or why there is none.
    ``runtime_claims``: the claims of the trainer containers in the runtime. ``replaces``: the
    release gives the trainer containers resourcesPerNode as their whole resources (Trainer v2.2,
    ``releases``), so the move carries every runtime value the pods keep, not only those the
    plugins read."""
    patch: dict[str, Any] = {}
    for one in patches:
        patch = compose_patches(patch, one)
    if _has_deletion(patch):
        return None, (
            "it deletes a value (null or $patch: replace), which resourcesPerNode cannot do: the API server "
            "prunes nulls there and the runtime's value stays; change the runtime, or set the value you want"
        )
    lost = _claims_lost(patch, existing, runtime_claims)
    if lost:
        return None, (
            f"Kubeflow Trainer drops the trainer container's claims once resourcesPerNode is set (newRuntimeInfo, "
            f"pkg/runtime/core/trainingruntime.go, rebuilds its resources from limits and requests only), so "
            f"the claims {', '.join(lost)} would be gone from the pods; size this container in the runtime instead"
        )
    if existing is None or replaces:
        carried: dict[str, Any] = {}
        recounted: list[str] = []
        for section in ("limits", "requests"):
            values = runtime_node.get(section)
            own = {**(patch.get(section) or {}), **((existing or {}).get(section) or {})}
            kept = {k: v for k, v in (values or {}).items() if (replaces or read_by_plugins(k)) and k not in own}
            if existing is not None:
                recounted += [f"{section}.{k}" for k in kept if read_by_plugins(k)]
            if kept:
                carried[section] = kept
        if recounted:
            return None, (
                "on Kubeflow Trainer v2.2 resourcesPerNode replaces the trainer container's resources (WithResources, "
                "pkg/runtime/framework/plugins/jobset/builder.go at v2.2.1), so the move would have to carry the "
                f"runtime's {', '.join(recounted)} into it, and the plugins would then count them from "
                "resourcesPerNode (devices, processes per node); write them in spec.trainer.resourcesPerNode yourself"
            )
        patch = merge_requirements(carried, patch)
    moved = merge_requirements(merge_requirements(None, patch), existing, claims_by_name=True)
    return {section: _quantities_as_strings(values) for section, values in moved.items()}, None


def _quantities_as_strings(values: Any) -> Any:
    """A section's quantities written as YAML numbers, as strings: on a TrainJob with runtimePatches,
    upstream's TrainJob webhook stores a number in resourcesPerNode as a string, and spec.trainer is
    immutable, so every later apply of the number is refused (``rules/crd.py``
    ``_numeric_quantities``, seen on the control plane)."""
    if not isinstance(values, Mapping):
        return values
    return {k: str(v) if isinstance(v, int | float) and not isinstance(v, bool) else v for k, v in values.items()}


def _claims_lost(patch: Mapping[str, Any], existing: Mapping[str, Any] | None, runtime: Iterable[str]) -> list[str]:
    """The claims the pods would have with the patch and lose with the move: the patch's own, or,
    where the move creates resourcesPerNode, the runtime's that the patch keeps."""
    claims = patch.get("claims")
    if isinstance(claims, list):
        return [str(c.get("name")) for c in claims if isinstance(c, Mapping)]
    return [] if existing is not None else list(dict.fromkeys(runtime))


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
