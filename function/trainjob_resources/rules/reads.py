"""What rules may read, each as a memo key (``framework.Read``). A rule declares the ones it reads;
the stage's memo keys on the union (``framework.reads_of``). A new input gets a new ``Read`` here."""

from __future__ import annotations

from collections.abc import Hashable
from typing import TYPE_CHECKING, Any

from ..derive.provenance import dump
from .framework import Read

if TYPE_CHECKING:
    from ..resolve.context import TrainJobContext


def _runtime(c: TrainJobContext, _: Any) -> Hashable:
    return id(c.entry)  # entries live as long as the render


def _container_sites(c: TrainJobContext, _: Any) -> Hashable:
    return tuple(
        (s.job_site.patch_index, s.job_site.job_index, s.container_list, s.index, s.name, bool(s.patch.env))
        for s in c.sites
    )


def _container_sites_shape(c: TrainJobContext, _: Any) -> Hashable:
    return tuple((s.job, s.container_list, s.name, bool(s.patch.env)) for s in c.sites)


def _namespace_policy(c: TrainJobContext, _: Any) -> Hashable:
    bundle, namespace = c.bundle, c.namespace
    policed = bundle.namespace_policy("LimitRange", namespace) or bundle.namespace_policy("ResourceQuota", namespace)
    return namespace if policed else ""  # without policy objects the namespace changes nothing


def _num_nodes(c: TrainJobContext, _: Any) -> Hashable:
    trainer = c.trainjob.spec.trainer
    return trainer.num_nodes if trainer else None


def _effective(_: TrainJobContext, effective: Any) -> Hashable:
    sources = sorted((f"{s}/{k}", src.label, src.path or "") for (s, k), src in effective.sources.items())
    patched = [(src.label, src.path or "") for src in effective.patched_by]
    return dump([effective.requirements, sources, patched])


# The runtime the TrainJob resolved to, with everything read from it.
RUNTIME = Read("runtime", _runtime)
MODE = Read("option mode", lambda c, _: c.config.mode)
TRAINER_VERSION = Read("option trainerVersion", lambda c, _: c.release)
TRAINER_RESOURCES = Read("option trainerResources", lambda c, _: c.config.trainer_resources)
# The patches' managers; without where they are named, whether they are all valid.
MANAGERS = Read("managers", lambda c, _: c.managers, lambda c, _: c.memo.valid_managers(c.managers))
# Which replicated jobs the patches name, and where.
JOB_SITES = Read(
    "job sites",
    lambda c, _: tuple((s.patch_index, s.job_index, s.job) for s in c.job_sites),
    lambda c, _: tuple(s.job for s in c.job_sites),
)
# Which containers the ContainerPatches name, where, and whether they set env.
CONTAINER_SITES = Read("container sites", _container_sites, _container_sites_shape)
# What each ContainerPatch's resources say (None: no resources).
PATCHED_RESOURCES = Read("patched resources", lambda c, _: repr([s.resources for s in c.sites]))
RESOURCES_PER_NODE = Read("resourcesPerNode", lambda c, _: repr(c.per_node))
# The trainer containers, container order and labels (``trainer/topology.py``).
TOPOLOGY = Read("topology", lambda c, _: c.topology)
NUM_NODES = Read("numNodes", _num_nodes)
# Whether the TrainJob has spec.trainer (a move to resourcesPerNode would create it: resolve/moving.py).
HAS_TRAINER = Read("spec.trainer set", lambda c, _: c.trainjob.spec.trainer is not None)
# The namespace, where it has LimitRanges or ResourceQuotas in the bundle.
NAMESPACE_POLICY = Read("namespace policy", _namespace_policy)
# The ContainerPatches that write resources: where (findings point there), which container, and what
# they say; without where, for results that name no place. Sites without resources add nothing to
# the pods (``explain``), nor does a patch's env.
SIZED_CONTAINERS = Read(
    "sized containers",
    lambda c, _: repr([(s.resources_path, s.key, s.resources) for s in c.sites if s.resources is not None]),
    lambda c, _: repr([(s.key, s.resources) for s in c.sites if s.resources is not None]),
)
# An effective-scope rule's subject: a container's resources and where each value came from.
EFFECTIVE = Read("effective resources", _effective)

# What ``context.moved`` (resolve/moving.py) reads.
MOVED = (RUNTIME, TRAINER_VERSION, HAS_TRAINER, CONTAINER_SITES, PATCHED_RESOURCES, RESOURCES_PER_NODE, TOPOLOGY)
