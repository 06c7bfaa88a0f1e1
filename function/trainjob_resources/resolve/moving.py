"""``trainerResources: moveToResourcesPerNode``: what moving the trainer containers' patches to
``spec.trainer.resourcesPerNode`` would write, or why it cannot (upstream's ``newRuntimeInfo``,
``pkg/runtime/core/trainingruntime.go``, sizes every trainer container from that one field)."""

from __future__ import annotations

from typing import Any

from ..derive.materialize import canonical_quantity, clean_requirements
from ..derive.provenance import dump
from ..kube.merge import compose_patches, merge_requirements
from ..trainer.per_node import moved_resources, reader_differs, runtime_node_resources
from ..trainer.runtime_view import TRAINER_CONTAINER
from ..trainer.sites import ContainerSite
from ..trainer.topology import Topology
from .bundle import RuntimeEntry


def moved(
    entry: RuntimeEntry,
    sites: list[ContainerSite],
    per_node: dict[str, Any] | None,
    topo: Topology,
    replaces: bool = False,
    has_trainer: bool = True,
) -> tuple[dict[str, Any] | None, str | None]:
    """The resourcesPerNode that moving the trainer containers' patches would write (``per_node``);
    ``has_trainer``: whether the TrainJob has ``spec.trainer``, which a move would otherwise create."""
    assert entry.model is not None
    patches = [s.resources for s in sites if s.resources is not None and topo.is_trainer(*s.key)]
    if not patches:
        return None, None
    policies = entry.model.ml_policy.policies if entry.model.ml_policy is not None else ()
    if not has_trainer and "flux" in policies:
        return None, (
            "the TrainJob has no spec.trainer, and the move would create one without numNodes, with which Kubeflow "
            "Trainer's flux plugin fails at every reconcile (generateInitEntrypoint, "
            "pkg/runtime/framework/plugins/flux/flux.go): write spec.trainer.numNodes"
        )
    if not has_trainer and policies:
        return None, (
            f"the TrainJob has no spec.trainer, and the move would create it: with spec.trainer set, Kubeflow "
            f"Trainer's {policies[0]} plugin gives the trainer container its distributed-training env vars and "
            "container port "
            f"(EnforceMLPolicy, pkg/runtime/framework/plugins/{policies[0]}/{policies[0]}.go: "
            "`if trainJob.Spec.Trainer != nil`), so the pods would change beyond their resources; write "
            "spec.trainer yourself (spec.trainer: {} is enough) if the job wants that, or size the container in "
            "the runtime"
        )
    differ = reader_differs(entry.model, entry.jobs, topo) or _trainers_differ(entry, sites, topo)
    if differ is not None:
        return None, differ
    claims = []
    for job in sorted(topo.trainers):
        info = entry.jobs.get(job)
        container = info.containers.get(("containers", TRAINER_CONTAINER)) if info else None
        for claim in (container.resources.get("claims") if container is not None else None) or []:
            claims.append(str(claim.get("name")) if isinstance(claim, dict) else str(claim))
    runtime_node = runtime_node_resources(entry.model, entry.jobs, topo)
    return moved_resources(patches, per_node, runtime_node, claims, replaces)


def _trainers_differ(entry: RuntimeEntry, sites: list[ContainerSite], topo: Topology) -> str | None:
    """resourcesPerNode sizes every trainer container (``newRuntimeInfo``,
    pkg/runtime/core/trainingruntime.go: with mpi.runLauncherAsNode, the labelled launcher and the
    ``node`` job both): a move keeps the pods as patched only when the patches leave them all equal."""
    if len(topo.trainers) < 2:
        return None
    composed: dict[str, dict[str, Any]] = {}
    for site in sites:
        if site.resources is not None and topo.is_trainer(*site.key):
            composed[site.job] = compose_patches(composed.get(site.job), site.resources)
    results: dict[str, dict[str, Any]] = {}
    for job in sorted(topo.trainers):
        info = entry.jobs.get(job)
        container = info.containers.get(("containers", TRAINER_CONTAINER)) if info else None
        results[job] = merge_requirements(container.resources if container is not None else {}, composed.get(job))
    values = [by_value(r) for r in results.values()]
    if all(v == values[0] for v in values):
        return None
    named = ", ".join(f"{job}/containers/{TRAINER_CONTAINER} {dump(r)}" for job, r in results.items())
    jobs = " and ".join(repr(job) for job in sorted(topo.trainers))
    return (
        f"with mlPolicy.mpi.runLauncherAsNode the launcher is a node: Kubeflow Trainer gives "
        f"spec.trainer.resourcesPerNode to the node container of replicated jobs {jobs} alike (newRuntimeInfo, "
        "pkg/runtime/core/trainingruntime.go), so a TrainJob cannot size the launcher apart from the workers "
        f"(the patches give {named}). Size them alike (the same resources for both, or "
        "spec.trainer.resourcesPerNode and none in the patches), or ask the platform for a runtime whose launcher "
        "is not a node (runLauncherAsNode unset): there the launcher is sized in the runtime and the workers' "
        "node job by runtimePatches"
    )


def by_value(requirements: dict[str, Any]) -> dict[str, Any]:
    """Resource requirements compared by value (``64Gi`` and ``65536Mi`` alike)."""
    out = clean_requirements(requirements)
    for section in ("limits", "requests"):
        if isinstance(out.get(section), dict):
            out[section] = {k: canonical_quantity(v) for k, v in out[section].items()}
    return out
