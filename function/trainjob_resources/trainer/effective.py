"""Effective container resources: the runtime's, then every patch in list order, then resourcesPerNode.

As ``pkg/runtime/core/trainingruntime.go`` computes them: ``mergeRuntimePatches`` applies the patches
(claims replaced), then ``newRuntimeInfo`` merges ``resourcesPerNode`` onto the trainer containers
that ``topology`` names (``MergeResourceRequirements``: nulls pruned, claims by name) and keeps
only the merged limits and requests: with ``resourcesPerNode`` set, a trainer container has no
claims, neither the runtime's nor resourcesPerNode's; see ``merge``. In ``native`` mode the
patches' nulls are pruned too: the API server keeps none.

Each value remembers where it came from (the runtime, a patch's manager, resourcesPerNode), so
errors point at the field that introduced the value and ``explain`` can show its source.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

from ..kube.merge import DIRECTIVE, MAPPINGS, REPLACE, merge_requirements, without_nulls
from ..values.records import MutableRecord, Record
from .runtime_view import ContainerInfo, ContainerList, JobInfo
from .sites import ContainerSite
from .topology import Topology

RUNTIME_SOURCE = "runtime"
PER_NODE_SOURCE = "resourcesPerNode"
RESOURCES_PER_NODE_PATH = "spec.trainer.resourcesPerNode"

ContainerKey = tuple[str, ContainerList, str]


class Source(Record):
    __slots__ = ("label", "path")

    def __init__(self, label: str, path: str | None) -> None:
        self.label: Final = label
        self.path: Final = path  # the ``resources`` map that set the value; None for the runtime


class Effective(MutableRecord):
    __slots__ = ("container", "dropped_claims", "patched_by", "requirements", "sources")

    def __init__(
        self,
        container: ContainerInfo,
        requirements: dict[str, Any],
        sources: dict[tuple[str, str], Source] | None = None,
        patched_by: list[Source] | None = None,
    ) -> None:
        self.container = container
        self.requirements = requirements
        self.sources = {} if sources is None else sources
        self.patched_by = [] if patched_by is None else patched_by
        self.dropped_claims: list[str] = []  # the claims resourcesPerNode made upstream drop

    def overlay(self, patch: Mapping[str, Any] | None, source: Source, claims_by_name: bool = False) -> None:
        self.requirements = merge_requirements(self.requirements, patch, claims_by_name)
        self.patched_by.append(source)
        for section in ("limits", "requests"):
            values = (patch or {}).get(section) if patch else None
            replaced = isinstance(values, MAPPINGS) and values.get(DIRECTIVE) == REPLACE
            if patch is not None and section in patch and (values is None or replaced):
                for key in [k for k in self.sources if k[0] == section]:
                    del self.sources[key]
            for name, quantity in (values or {}).items() if isinstance(values, MAPPINGS) else ():
                if name == DIRECTIVE:
                    continue
                if quantity is None:
                    self.sources.pop((section, name), None)
                else:
                    self.sources[(section, name)] = source

    def source_of(self, section: str, name: str) -> Source:
        return self.sources.get((section, name), Source(RUNTIME_SOURCE, None))


def start(container: ContainerInfo) -> Effective:
    effective = Effective(container, merge_requirements(None, container.resources))
    for section in ("limits", "requests"):
        values = container.resources.get(section)
        for name in values if isinstance(values, MAPPINGS) else ():
            effective.sources[(section, name)] = Source(RUNTIME_SOURCE, None)
    return effective


def effective_resources(
    jobs: Mapping[str, JobInfo],
    sites: Iterable[ContainerSite],
    resources_per_node: Mapping[str, Any] | None = None,
    trainers: Topology | None = None,
    native: bool = False,
) -> dict[ContainerKey, Effective]:
    """Effective resources of every runtime container that a patch (or resourcesPerNode) sizes;
    ``trainers`` says which containers resourcesPerNode sizes (none without it)."""
    out: dict[ContainerKey, Effective] = {}
    for site in sites:
        if site.resources is None:
            continue
        job = jobs.get(site.job)
        container = job.containers.get((site.container_list, site.name)) if job else None
        if container is None:
            continue
        effective = out.get(site.key) or start(container)
        effective.overlay(
            without_nulls(site.resources) if native else site.resources, Source(site.manager, site.resources_path)
        )
        out[site.key] = effective
    if resources_per_node is not None and trainers is not None:
        per_node = without_nulls(resources_per_node)
        for job in jobs.values():
            for (list_name, name), container in job.containers.items():
                if trainers.is_trainer(job.name, list_name, name):
                    key: ContainerKey = (job.name, list_name, name)
                    effective = out.get(key) or start(container)
                    effective.overlay(per_node, Source(PER_NODE_SOURCE, RESOURCES_PER_NODE_PATH), claims_by_name=True)
                    # newRuntimeInfo then keeps only limits and requests: the claims are gone.
                    claims = effective.requirements.pop("claims", None)
                    effective.dropped_claims = [
                        str(c.get("name")) for c in claims or [] if isinstance(c, MAPPINGS) and c.get("name")
                    ]
                    out[key] = effective
    return out
