"""The JobSet one TrainJob really gets, as far as resources go: patched labels, the trainer containers,
container order and pod counts, each as upstream Kubeflow Trainer computes it.

- **Patched labels.** ``pkg/runtime/core/trainingruntime.go`` ``newRuntimeInfo`` reads a replicated
  job's ``trainer.kubeflow.org/trainjob-ancestor-step`` label from the template *after*
  ``mergeRuntimePatches``, so a JobTemplatePatch's labels count (maps merge per key).
- **Trainer containers** (sized by ``spec.trainer.resourcesPerNode``, never by a patch), also
  ``newRuntimeInfo``: the first ``containers`` entry named ``node`` of a replicated job whose patched
  ancestor label is ``trainer`` **and** whose runtime has an ``mlPolicy``, or, with
  ``mlPolicy.mpi.runLauncherAsNode``, of the replicated job **named** ``node`` (upstream's deepspeed
  and mlx runtimes label the launcher, not ``node``). A runtime without ``mlPolicy`` has none:
  upstream ignores ``resourcesPerNode`` there.
- **Container order.** ``mergeRuntimePatches`` applies each patch with
  ``strategicpatch.StrategicMergePatch`` and restores only the order of ``replicatedJobs``: the
  containers a patch lists come out in the patch's relative order (apimachinery
  ``pkg/util/strategicpatch/patch.go`` ``mergeSlice``, ``normalizeElementOrder``,
  ``mergeSortedSlice``), which decides the pod's init sequence and so its sidecar arithmetic.
  Every entry reorders as written, in both modes: ``materialize`` mode removes an entry left with
  nothing but its name once ``resources`` is taken out, except where that would change the order
  (``names_kept_for_order``): there the name stays on the TrainJob.
- **Pod counts.** ``newRuntimeInfo`` starts each PodSet at the job's ``parallelism`` (default 1),
  a trainer-labelled job of a runtime with ``mlPolicy`` at ``mlPolicy.numNodes``, at least 1
  (``pkg/runtime/runtime.go`` ``WithPodSet``). ``spec.trainer.numNodes`` then replaces the count
  of the job named ``node`` for MPI, minus one for the launcher with ``runLauncherAsNode``, at
  least 1 (``pkg/runtime/framework/plugins/mpi/mpi.go`` ``EnforceMLPolicy``), else of the first
  trainer-labelled job (``EnforceMLPolicy`` of ``pkg/runtime/framework/plugins/torch/torch.go``,
  ``pkg/runtime/framework/plugins/jax/jax.go``, ``pkg/runtime/framework/plugins/xgboost/xgboost.go``,
  ``pkg/runtime/framework/plugins/plainml/plainml.go``).
  ``pkg/runtime/framework/plugins/jobset/jobset.go`` ``syncParallelCount`` writes the count to
  ``parallelism`` and ``completions`` of every job; ``pkg/runtime/framework/plugins/jobset/builder.go``
  gives the trainer and initializer jobs one replica.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Final

from ..values.records import Record
from .runtime_view import ANCESTOR_LABEL, TRAINER_ANCESTOR, TRAINER_CONTAINER, ContainerList, RuntimeSpecView
from .sites import ContainerSite
from .trainjob_view import TrainJobView

MPI_NODE_JOB = "node"
# Replicated jobs whose replicas the controller sets to 1 (pkg/runtime/framework/plugins/jobset/builder.go).
SINGLE_REPLICA_ANCESTORS = (TRAINER_ANCESTOR, "dataset-initializer", "model-initializer")

OrderKey = tuple[str, ContainerList]


class Topology(Record):
    """What one TrainJob's patches make of its runtime's replicated jobs (hashable: a memo key)."""

    __slots__ = ("_hash", "ancestors", "orders", "trainers")

    def __init__(
        self,
        ancestors: tuple[tuple[str, str | None], ...],
        trainers: frozenset[str],
        orders: tuple[tuple[OrderKey, tuple[str, ...]], ...],
    ) -> None:
        self.ancestors: Final = ancestors  # (job, patched ancestor label or None), in runtime order
        self.trainers: Final = trainers  # the jobs whose ``node`` container resourcesPerNode sizes
        self.orders: Final = orders  # container order of each list a kept patch reorders
        self._hash: Final = hash((ancestors, orders, trainers))  # hashed in several memo keys per TrainJob

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        """``Record``'s equality, without building two tuples: memo lookups that hit compare
        one TrainJob's topology with another's."""
        if other.__class__ is not self.__class__:
            return NotImplemented
        assert isinstance(other, Topology)
        return (
            self._hash == other._hash
            and self.ancestors == other.ancestors
            and self.orders == other.orders
            and self.trainers == other.trainers
        )

    def ancestor(self, job: str) -> str | None:
        return dict(self.ancestors).get(job)

    def is_trainer(self, job: str, container_list: ContainerList, name: str) -> bool:
        """Whether ``resourcesPerNode`` sizes this container (``newRuntimeInfo``)."""
        return job in self.trainers and container_list == "containers" and name == TRAINER_CONTAINER

    def order(self, job: str, container_list: ContainerList, names: Sequence[str]) -> list[str]:
        """``names`` (the runtime's order) as the patched pod lists them."""
        return list(dict(self.orders).get((job, container_list), names))


def topology(runtime: RuntimeSpecView, trainjob: TrainJobView, sites: Iterable[ContainerSite]) -> Topology:
    labels: dict[str, dict[str, str]] = {job.name: dict(job.labels) for job in runtime.replicated_jobs}
    for patch in trainjob.spec.runtime_patches or []:
        spec = patch.training_runtime_spec
        jobset = spec.template.spec if spec and spec.template else None
        for job in (jobset.replicated_jobs if jobset else None) or []:
            meta = job.template.metadata if job.template else None
            if meta is not None and meta.labels and job.name in labels:
                labels[job.name].update(meta.labels)
    ml_policy = runtime.ml_policy
    launcher_as_node = bool(ml_policy and ml_policy.mpi and ml_policy.mpi.run_launcher_as_node)
    ancestors = tuple((job.name, labels[job.name].get(ANCESTOR_LABEL)) for job in runtime.replicated_jobs)
    trainers = frozenset(
        name
        for name, ancestor in ancestors
        if (ancestor == TRAINER_ANCESTOR and ml_policy is not None) or (launcher_as_node and name == MPI_NODE_JOB)
    )
    return Topology(ancestors, trainers, _orders(runtime, sites, keep_all=True))


def names_kept_for_order(
    topo: Topology, runtime: RuntimeSpecView, sites: Sequence[ContainerSite]
) -> frozenset[OrderKey]:
    """The lists whose order would change if ``materialize`` removed the entries left with nothing but
    their name: there it keeps them (``- name: x``), so the pod's init sequence is the patches' as written
    (seen on the control plane: tests/cluster/test_move_and_order.py). ``topo`` is ``topology``'s of
    these sites (its orders are the patches' as written)."""
    if all(_stays(site) for site in sites):
        return frozenset()
    as_written, without = dict(topo.orders), dict(_orders(runtime, sites, keep_all=False))
    return frozenset(key for key in as_written.keys() | without.keys() if as_written.get(key) != without.get(key))


def _stays(site: ContainerSite) -> bool:
    """Whether the site's entry is kept when its resources are taken out (it patches more than them)."""
    return site.resources is None or bool(site.patch.model_fields_set - {"name", "resources"})


def _orders(
    runtime: RuntimeSpecView, sites: Iterable[ContainerSite], keep_all: bool
) -> tuple[tuple[OrderKey, tuple[str, ...]], ...]:
    # The names each kept patch lists, per (patch, job, list), in the order written.
    listed: dict[tuple[int, str, ContainerList], list[str]] = {}
    for site in sites:
        if keep_all or _stays(site):
            listed.setdefault((site.job_site.patch_index, site.job, site.container_list), []).append(site.name)
    if not listed:
        return ()
    current: dict[OrderKey, list[str]] = {}
    for job in runtime.replicated_jobs:
        current[(job.name, "initContainers")] = [c.name for c in job.init_containers]
        current[(job.name, "containers")] = [c.name for c in job.containers]
    changed: set[OrderKey] = set()
    for (_, job_name, list_name), names in sorted(listed.items(), key=lambda pair: pair[0][0]):
        key = (job_name, list_name)
        if key in current:
            reordered = smp_order(current[key], names)
            if reordered != current[key]:
                current[key] = reordered
                changed.add(key)
    return tuple(sorted((key, tuple(current[key])) for key in changed))


def smp_order(original: Sequence[str], patch: Sequence[str]) -> list[str]:
    """The order of a list merged by name: apimachinery's ``mergeSlice`` then ``normalizeElementOrder``.

    The items the patch lists keep the patch's relative order, the others the original's; the two
    are interleaved by ``mergeSortedSlice``, which places an original-only item before the next
    patch item only when both are in the original and it came first there.
    """
    merged = list(dict.fromkeys([*original, *patch]))  # mergeSliceWithoutSpecialElements appends new items
    in_patch = set(patch)
    patch_items = sorted((n for n in merged if n in in_patch), key=_position(patch))
    server_only = sorted((n for n in merged if n not in in_patch), key=_position(original))
    server = _position(original)
    out: list[str] = []
    i = j = 0
    while i < len(server_only) or j < len(patch_items):
        if i >= len(server_only):
            out.append(patch_items[j])
            j += 1
        elif j >= len(patch_items):
            out.append(server_only[i])
            i += 1
        else:
            left, right = server(server_only[i]), server(patch_items[j])
            if left >= 0 and right >= 0 and left < right:
                out.append(server_only[i])
                i += 1
            else:
                out.append(patch_items[j])
                j += 1
    return out


def _position(order: Sequence[str]) -> _Index:
    return _Index({name: i for i, name in enumerate(order)})


class _Index:
    __slots__ = ("_at",)

    def __init__(self, at: Mapping[str, int]) -> None:
        self._at = at

    def __call__(self, name: str) -> int:
        return self._at.get(name, -1)


def pod_count(topo: Topology, runtime: RuntimeSpecView, trainjob: TrainJobView, job_name: str) -> int:
    """Pods of one replicated job, as the controller sizes the JobSet (see the module's docstring)."""
    job = next(j for j in runtime.replicated_jobs if j.name == job_name)
    ml_policy = runtime.ml_policy
    mpi = ml_policy.mpi if ml_policy is not None else None
    ancestor = topo.ancestor(job_name)
    count = job.parallelism if job.parallelism is not None else 1
    if ancestor == TRAINER_ANCESTOR and ml_policy is not None:
        count = ml_policy.num_nodes if ml_policy.num_nodes is not None else 1
    count = max(count, 1)
    num_nodes = trainjob.spec.trainer.num_nodes if trainjob.spec.trainer is not None else None
    if num_nodes is not None:
        if mpi is not None:
            if job_name == MPI_NODE_JOB:
                count = max(num_nodes - 1, 1) if mpi.run_launcher_as_node else num_nodes
        elif job_name == next((name for name, a in topo.ancestors if a == TRAINER_ANCESTOR), None):
            count = num_nodes
    replicas = 1 if ancestor in SINGLE_REPLICA_ANCESTORS else (job.replicas if job.replicas is not None else 1)
    return max(replicas, 0) * max(count, 0)
