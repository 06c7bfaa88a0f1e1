"""Moving a trainer container's patched resources to ``spec.trainer.resourcesPerNode`` without
changing the training topology, and the resourcesPerNode that upstream would ignore.

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
from .runtime_view import ANCESTOR_LABEL, TRAINER_ANCESTOR, TRAINER_CONTAINER, JobInfo, RuntimeSpecView
from .sites import ContainerSite
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
    immutable, so every later apply of the number is refused (crd_rules._numeric_quantities, seen on
    the control plane)."""
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


def dropped_claims(
    jobs: Mapping[str, JobInfo], sites: Iterable[ContainerSite], per_node: Mapping[str, Any] | None, topo: Topology
) -> list[Violation]:
    """Claims that a written resourcesPerNode makes Kubeflow Trainer drop (``newRuntimeInfo`` keeps
    only limits and requests of the trainer containers, its own claims included)."""
    if per_node is None or not topo.trainers:
        return []
    out: list[Violation] = []
    own = per_node.get("claims")
    if isinstance(own, list) and own:
        out.append(
            Violation(
                fieldpath.child(RESOURCES_PER_NODE_PATH, "claims"),
                "Kubeflow Trainer ignores claims in resourcesPerNode: newRuntimeInfo "
                "(pkg/runtime/core/trainingruntime.go) sets the trainer container's resources from limits and "
                "requests only; claim devices in the runtime's pod template (a container of another job, or "
                "the pod's resourceClaims)",
                severity="warning",
            )
        )
    patched = {s.key: s for s in sites if s.resources is not None and isinstance(s.resources.get("claims"), list)}
    for job in sorted(topo.trainers):
        info = jobs.get(job)
        container = info.containers.get(("containers", TRAINER_CONTAINER)) if info else None
        if container is None:
            continue
        site = patched.get((job, "containers", TRAINER_CONTAINER))
        claims = site.resources.get("claims") if site is not None and site.resources is not None else None
        claims = claims if claims is not None else container.resources.get("claims")
        names = [str(c.get("name")) for c in claims or [] if isinstance(c, Mapping)]
        if names:
            out.append(
                Violation(
                    RESOURCES_PER_NODE_PATH,
                    f"with resourcesPerNode set, Kubeflow Trainer drops the claims {', '.join(names)} of the node "
                    f"container of replicated job {job!r} (newRuntimeInfo, pkg/runtime/core/trainingruntime.go, "
                    "rebuilds its resources from limits and requests only): its pods get no such device; "
                    "remove resourcesPerNode and size the container in the runtime, or claim the device elsewhere",
                    severity="warning",
                )
            )
    return out


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


def ignored_per_node(runtime: RuntimeSpecView, per_node: Mapping[str, Any] | None, display: str) -> list[Violation]:
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
