"""What a TrainJob's derived runtime folds in: the effective resources of every container but the
trainer, the canonical overrides its name hashes, and a description of each change."""

from __future__ import annotations

from typing import Any, Final

from ..kube.merge import compose_patches
from ..trainer.effective import ContainerKey, Effective
from ..trainer.sites import ContainerSite
from ..trainer.topology import Topology
from ..values.records import Record
from .materialize import canonical_patch, overrides_of
from .provenance import dump


class Plan(Record):
    __slots__ = ("described", "effective", "overrides", "spelling")

    def __init__(
        self,
        effective: dict[ContainerKey, Effective],
        overrides: dict[str, Any],
        described: list[str],
        spelling: str | None = None,
    ) -> None:
        # Empty when no patch says anything: nothing is derived. An override that says something
        # derives even when it equals the runtime's value today: the name must not depend on the
        # base's content (the stateless paths never see their earlier output).
        self.effective: Final = effective
        self.overrides: Final = overrides
        self.described: Final = described
        self.spelling: Final = dump(overrides_of(effective)) if spelling is None else spelling

    def __reduce__(self) -> tuple[type[Plan], tuple[Any, ...]]:
        # Across processes (cli/fan_out.py) only what deriving reads: where each container is,
        # its resources, the overrides and their spelling.
        folded = {key: Effective(one.container, one.requirements) for key, one in self.effective.items()}
        return Plan, (folded, self.overrides, self.described, self.spelling)


def make_plan(all_effective: dict[ContainerKey, Effective], sites: list[ContainerSite], topo: Topology) -> Plan:
    composed: dict[ContainerKey, dict[str, Any]] = {}
    for site in sites:
        if site.resources is not None and site.key in all_effective and not topo.is_trainer(*site.key):
            composed[site.key] = compose_patches(composed.get(site.key), site.resources)
    # A container whose patches say nothing (``{}``, ``limits: {}``) is not touched, nor named.
    canonical = {k: patch for k in sorted(composed) if (patch := canonical_patch(composed[k]))}
    effective = {k: all_effective[k] for k in canonical}
    if not effective:
        return Plan({}, {}, [])
    overrides = {"/".join(k): patch for k, patch in canonical.items()}
    described = [_describe(k, e) for k, e in sorted(effective.items())]
    return Plan(effective, overrides, described)


def _describe(key: ContainerKey, effective: Effective) -> str:
    job, list_name, name = key
    before = effective.container.resources
    after = effective.requirements
    changes = []
    for section in ("limits", "requests"):
        old = before.get(section) or {}
        new = after.get(section) or {}
        for resource in sorted(set(old) | set(new)):
            if old.get(resource) != new.get(resource):
                changes.append(f"{section}.{resource} {old.get(resource, '(none)')} -> {new.get(resource, '(none)')}")
    if (before.get("claims") or []) != (after.get("claims") or []):
        changes.append("claims changed")
    return f"{job}/{list_name}/{name}: {', '.join(changes) or 'unchanged'}"
