"""A trainer container's patched value that ``spec.trainer.resourcesPerNode`` overrides: Kubeflow
Trainer merges resourcesPerNode over the trainer container (``newRuntimeInfo``,
pkg/runtime/core/trainingruntime.go), so the patch's value never reaches a pod, and a move to
resourcesPerNode (``resolve/moving.py``) keeps resourcesPerNode's. Said, not dropped silently. On
Trainer v2.2 resourcesPerNode replaces the trainer container's resources (``trainer/releases.py``):
there every patched value is overridden, whatever its resource name. In ``native`` mode nothing moves:
``native_per_node`` says what KEP-2782's precedence keeps."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from ..derive.materialize import canonical_quantity
from ..resolve.context import TrainJobContext
from ..trainer.effective import RESOURCES_PER_NODE_PATH
from ..values import fieldpath
from ..values.violations import Violation
from .framework import Rule
from .reads import CONTAINER_SITES, MODE, PATCHED_RESOURCES, RESOURCES_PER_NODE, TOPOLOGY, TRAINER_VERSION
from .stages import PATCHES


def _check(context: TrainJobContext, site: Any) -> list[Violation]:
    per_node = context.per_node
    if context.native or site.resources is None or not isinstance(per_node, Mapping):
        return []
    if not context.topo.is_trainer(*site.key):
        return []
    if context.release.per_node_replaces:
        return _replaced(context, site, per_node)
    return [
        Violation(
            fieldpath.child(fieldpath.child(site.resources_path, section), name),
            f"{section}.{name} {value} of the trainer container {site.name!r} of replicated job "
            f"{site.job!r} never reaches a pod: {RESOURCES_PER_NODE_PATH}.{section}.{name} is {kept}, and Kubeflow "
            "Trainer merges resourcesPerNode over the trainer container (newRuntimeInfo, "
            f"pkg/runtime/core/trainingruntime.go); moved to resourcesPerNode, {kept} is kept and {value} "
            "dropped. Write the value once, in resourcesPerNode",
            severity="warning",
            current_value=value,
        )
        for section, name, value, kept in overridden(site.resources, per_node)
    ]


def overridden(resources: Mapping[str, Any], per_node: Mapping[str, Any]) -> Iterator[tuple[str, str, Any, Any]]:
    """Each patched value resourcesPerNode sets otherwise, merged name by name: (section, name, the
    patch's value, resourcesPerNode's)."""
    for section in ("limits", "requests"):
        patched, winning = resources.get(section), per_node.get(section)
        if not isinstance(patched, Mapping) or not isinstance(winning, Mapping):
            continue
        for name, value in patched.items():
            kept = winning.get(name)
            if value is not None and kept is not None and not _same(value, kept):
                yield section, name, value, kept


def _replaced(context: TrainJobContext, site: Any, per_node: Mapping[str, Any]) -> list[Violation]:
    """Trainer v2.2: a resourcesPerNode with limits or requests is the trainer container's whole
    resources (WithResources, pkg/runtime/framework/plugins/jobset/builder.go at v2.2.1)."""
    applied = {s: v for s in ("limits", "requests") if isinstance(v := per_node.get(s), Mapping)}
    if not applied:
        return []
    out: list[Violation] = []
    for section in ("limits", "requests"):
        patched = site.resources.get(section)
        for name, value in patched.items() if isinstance(patched, Mapping) else ():
            kept = applied.get(section, {}).get(name)
            if value is None or (kept is not None and _same(value, kept)):
                continue
            instead = (
                f"{RESOURCES_PER_NODE_PATH}.{section}.{name} is {kept}"
                if kept is not None
                else f"{RESOURCES_PER_NODE_PATH} has no {section}.{name}"
            )
            out.append(
                Violation(
                    fieldpath.child(fieldpath.child(site.resources_path, section), name),
                    f"{section}.{name} {value} of the trainer container {site.name!r} of replicated job "
                    f"{site.job!r} never reaches a pod: {instead}, and on {context.release.name} resourcesPerNode "
                    "replaces the trainer container's resources (WithResources, "
                    "pkg/runtime/framework/plugins/jobset/builder.go at v2.2.1). Write the value in resourcesPerNode",
                    severity="warning",
                    current_value=value,
                )
            )
    return out


def _same(a: Any, b: Any) -> bool:
    return bool(canonical_quantity(a) == canonical_quantity(b))


RULE = Rule(
    "shadowed-by-resources-per-node",
    (PATCHES,),
    "container-site",
    (MODE, CONTAINER_SITES, PATCHED_RESOURCES, RESOURCES_PER_NODE, TOPOLOGY, TRAINER_VERSION),
    "trainer patch values that resourcesPerNode overrides",
    _check,
)
