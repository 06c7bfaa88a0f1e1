"""Claims that a written resourcesPerNode makes Kubeflow Trainer drop: ``newRuntimeInfo``
(pkg/runtime/core/trainingruntime.go) keeps only limits and requests of the trainer containers,
its own claims included. Not in ``native`` mode: KEP-2782's Trainer merges resourcesPerNode and the
claims by name and rejects claims in resourcesPerNode (``native_per_node``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..resolve.context import TrainJobContext
from ..trainer.effective import RESOURCES_PER_NODE_PATH
from ..trainer.runtime_view import TRAINER_CONTAINER
from ..values import fieldpath
from ..values.violations import Violation
from .framework import Rule
from .reads import CONTAINER_SITES, MODE, PATCHED_RESOURCES, RESOURCES_PER_NODE, RUNTIME, TOPOLOGY
from .stages import PATCHES


def _check(context: TrainJobContext, _: Any) -> list[Violation]:
    per_node, topo = context.per_node, context.topo
    if context.native or per_node is None or not topo.trainers:
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
    sites = context.sites
    patched = {s.key: s for s in sites if s.resources is not None and isinstance(s.resources.get("claims"), list)}
    for job in sorted(topo.trainers):
        info = context.runtime.jobs.get(job)
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


RULE = Rule(
    "dropped-claims",
    (PATCHES,),
    "trainjob",
    (MODE, RUNTIME, CONTAINER_SITES, PATCHED_RESOURCES, RESOURCES_PER_NODE, TOPOLOGY),
    "trainer claims lost when resourcesPerNode replaces the container's resources",
    _check,
)
