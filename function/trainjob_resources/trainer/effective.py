"""Effective container resources: the runtime's, then every patch in list order, then resourcesPerNode.

As ``pkg/runtime/core/trainingruntime.go`` computes them: ``mergeRuntimePatches`` applies the patches
(claims replaced), then ``newRuntimeInfo`` merges ``resourcesPerNode`` onto the trainer containers that ``topology``
names (``MergeResourceRequirements``: nulls pruned, claims by name) and keeps only the merged limits
and requests: with ``resourcesPerNode`` set, a trainer container has no claims, neither the runtime's
nor resourcesPerNode's; see ``merge``. Trainer v2.2's JobSet builder replaces those containers'
resources with resourcesPerNode instead (``per_node_replaces``). In ``native`` mode the
patches' nulls are pruned too: the API server keeps none; and the trainer containers keep their claims,
as KEP-2782 specifies (kubeflow/trainer proposals/2782-dra-support: ``trainingruntime.go`` "merge
resourcesPerNode and claims by name").

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

    def replace(self, requirements: Mapping[str, Any], source: Source) -> None:
        """The container's resources become ``requirements``' limits and requests and nothing else."""
        claims = self.requirements.get("claims")
        self.requirements = {
            s: dict(v) for s in ("limits", "requests") if isinstance(v := requirements.get(s), MAPPINGS)
        }
        if claims is not None:
            self.requirements["claims"] = claims  # dropped by the caller, as newRuntimeInfo drops them
        self.patched_by.append(source)
        self.sources = {
            (s, name): source for s, values in self.requirements.items() if s != "claims" for name in values
        }

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
    per_node_replaces: bool = False,
) -> dict[ContainerKey, Effective]:
    """Effective resources of every runtime container that a patch (or resourcesPerNode) sizes;
    ``trainers`` says which containers resourcesPerNode sizes (none without it);
    ``per_node_replaces``: resourcesPerNode, where it has limits or requests, is the trainer
    containers' whole resources (Trainer v2.2, trainer/releases.py)."""
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
        _apply_per_node(out, jobs, resources_per_node, trainers, per_node_replaces, native)
    return out


def _apply_per_node(
    out: dict[ContainerKey, Effective],
    jobs: Mapping[str, JobInfo],
    resources_per_node: Mapping[str, Any],
    trainers: Topology,
    per_node_replaces: bool,
    native: bool = False,
) -> None:
    per_node = without_nulls(resources_per_node)
    # builder.go at v2.2.1: only a resourcesPerNode with limits or requests is applied.
    replacing = per_node_replaces and per_node is not None and ("limits" in per_node or "requests" in per_node)
    if per_node_replaces and not replacing:
        return
    for job in jobs.values():
        for (list_name, name), container in job.containers.items():
            if trainers.is_trainer(job.name, list_name, name):
                key: ContainerKey = (job.name, list_name, name)
                effective = out.get(key) or start(container)
                if replacing and per_node is not None:
                    effective.replace(per_node, Source(PER_NODE_SOURCE, RESOURCES_PER_NODE_PATH))
                else:
                    effective.overlay(per_node, Source(PER_NODE_SOURCE, RESOURCES_PER_NODE_PATH), claims_by_name=True)
                # newRuntimeInfo then keeps only limits and requests: the claims are gone (not under the KEP).
                claims = None if native else effective.requirements.pop("claims", None)
                effective.dropped_claims = [
                    str(c.get("name")) for c in claims or [] if isinstance(c, MAPPINGS) and c.get("name")
                ]
                out[key] = effective
