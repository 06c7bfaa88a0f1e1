"""The platform's ``maxPerRole`` (functionConfig): a container capped by its role
(``container_role``), counting every value that reaches the pod, a LimitRange's defaults included
(the repository may ship the LimitRange, and only the platform's own input may exempt a value from
its caps). Errors."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from ..kube.quantity import Quantity, parse_quantity
from ..report.explain import RUNTIME_REF_PATH, ContainerView, JobView, TrainJobPods
from ..resolve.context import TrainJobContext
from ..trainer.runtime_view import TRAINER_ANCESTOR, TRAINER_CONTAINER
from ..trainer.topology import Topology
from ..values.violations import Violation
from .framework import Rule
from .policy_math import LIMIT_RANGE_SOURCE, above, above_cap, container_path, set_here, where
from .policy_pods import POLICY_READS, pods_of
from .stages import POLICY

# maxPerRole. The initializer jobs are the ones upstream labels so (pkg/constants/constants.go
# DatasetInitializer, ModelInitializer): the runtime's label, since a patch that changes it is refused
# before the policy runs (rules/role_labels.py).
INITIALIZER_ANCESTORS = ("dataset-initializer", "model-initializer")
ROLE_MEANING = {
    "trainer": "the trainer container",
    "initializer": "the containers of the initializer jobs",
    "container": "the other regular containers: an MPI launcher, a custom job's, one beside the trainer",
    "sidecar": "restartable init containers",
    "initContainer": "init containers that run to completion",
}


def container_role(topo: Topology, job: JobView, c: ContainerView) -> str:
    """The ``maxPerRole`` role of a container: ``trainer`` for the ``node`` container of a
    trainer-labelled job (or of any job resourcesPerNode sizes, ``Topology.is_trainer``),
    ``initializer`` for a ``containers`` entry of an initializer job, ``container`` for any other
    ``containers`` entry (an MPI launcher), ``sidecar`` for a restartable init container and
    ``initContainer`` for one that runs to completion: the last three as ``explain`` labels them
    (``ContainerInfo.role``), one name for one container."""
    ancestor = topo.ancestor(job.name)
    if c.container_list == "containers":
        if topo.is_trainer(job.name, c.container_list, c.name):
            return "trainer"
        if ancestor == TRAINER_ANCESTOR and c.name == TRAINER_CONTAINER:
            return "trainer"
        if ancestor in INITIALIZER_ANCESTORS:
            return "initializer"
    return c.role


@lru_cache(maxsize=16)
def caps(written: tuple[tuple[str, tuple[tuple[str, str], ...]], ...]) -> dict[str, dict[str, Quantity]]:
    return {role: {name: parse_quantity(raw) for name, raw in caps} for role, caps in written}


def _check(context: TrainJobContext, _: Any) -> list[Violation]:
    written = context.config.max_per_role
    if not written:
        return []
    maxima = caps(tuple((role, tuple(caps.items())) for role, caps in written.items()))
    return role_violations(pods_of(context).view, maxima, context.topo)


def role_violations(view: TrainJobPods, maxima: dict[str, dict[str, Quantity]], topo: Topology) -> list[Violation]:
    out: list[Violation] = []
    for job in view.jobs:
        for c in job.containers:
            role = container_role(topo, job, c)
            for section, name, value, limit in above(c, maxima.get(role, {})):
                source, path, fix = value.source, container_path(c, section, name), ""
                if source.startswith(LIMIT_RANGE_SOURCE):
                    # Every default that reaches the pod counts: a LimitRange may come from the repository
                    # itself, and only the platform's own input may exempt a value from its caps.
                    unset = f"{section}.{name}" if set_here(c, name) else name
                    source += f", a default: neither the TrainJob nor the runtime sets {unset} for this container"
                    path = c.resources_path or RUNTIME_REF_PATH  # the patch that sized the container
                    fix = (
                        f"; set {section}.{name} of this container within the cap (the LimitRange's default "
                        "applies only where the container has none)"
                    )
                cap = (
                    f"the policy's maximum for the {role} role, {limit.canonical()} "
                    f"(functionConfig maxPerRole.{role}: {ROLE_MEANING[role]})"
                )
                what = f"{section}.{name} {value.quantity.canonical()} ({source}) of {where(job, c)}"
                out.append(above_cap(path, what, value, cap + fix))
    return out


RULE = Rule(
    "max-per-role",
    (POLICY,),
    "trainjob",
    POLICY_READS,
    "a container's request or limit above the platform's maxPerRole for its role",
    _check,
)
