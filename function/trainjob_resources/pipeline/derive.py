"""The derive stage: the derived runtime a TrainJob's patches ask for (its plan, the stage's rules,
the request to make it) and the TrainJob rewritten to point at it, its resources taken out of
runtimePatches or moved to resourcesPerNode."""

from __future__ import annotations

from typing import Any, Final

from yaml.nodes import MappingNode

from ..derive.materialize import point_at, strip_resources
from ..derive.provenance import dump, restored_places
from ..krm.resource_list import Item
from ..resolve.context import TrainJobContext
from ..rules import registry
from ..rules.framework import stops_at_error
from ..rules.stages import DERIVE
from ..trainer.effective import ContainerKey, Effective
from ..trainer.topology import names_kept_for_order
from ..yamltext import yamlnodes as yn
from .outcome import DeriveRequest, Outcome
from .parse import writable_copy

_RULES: Final = registry.of(DERIVE)


def derive(context: TrainJobContext, all_effective: dict[ContainerKey, Effective], outcome: Outcome) -> None:
    """Rewrite the TrainJob (in place when nothing was restored: it is valid, so it changes anyway)."""
    item, entry, topo, kind = context.item, context.runtime, context.topo, context.kind
    trainer_sites = [s for s in context.sites if s.resources is not None and topo.is_trainer(*s.key)]
    plan = context.plan = context.memo.plan(context, all_effective)
    request: DeriveRequest | None = None
    # runtimeRef is immutable (CEL self == oldSelf, pkg/apis/trainer/v1alpha1/trainjob_types.go), and
    # kustomize, Argo CD and Helm render from the source every time: whether an override derives,
    # and the name, depend on the TrainJob's text alone, never on the base's content.
    if plan.effective:
        found = stops_at_error(_RULES, context)
        outcome.violations += found
        if any(v.severity == "error" for v in found):
            return
        request = DeriveRequest(context.derived_identity, entry.identity, plan)
    work = context.work
    if work is None:
        assert isinstance(item.node, MappingNode)
        # In place, but where a finding names a field: its line is read from the tree as read
        # (``Item.file_of``), which must keep the resources this removes (a ``memory: 256`` warning).
        work = writable_copy(item.node) if any(v.path for v in outcome.violations) else item.node
    assert entry.model is not None
    removed, dropped = strip_resources(work, names_kept_for_order(topo, entry.model, context.sites))
    if trainer_sites:
        moved = context.moved[0]
        assert moved is not None  # the patches' rules refused the patches that cannot move
        _move_to_resources_per_node(work, moved, outcome)
        removed = [r for r in removed if not any(r.container == s.name and r.job == s.job for s in trainer_sites)]
    removed = restored_places(removed, dropped)
    if request is not None:
        _, scope, derived_name = request.identity
        target = Item(work)  # edits of its own: the TrainJob's item stays as read if it fails after all
        point_at(target, kind, scope, derived_name, context.raw["spec"]["runtimeRef"], removed)
        outcome.derive = request
        where = f"{scope}/" if scope else ""
        outcome.changes.insert(0, f"runtime {entry.display} materialized as {kind} {where}{derived_name}")
        outcome.changes += plan.described
    elif not trainer_sites:
        outcome.changes.append(
            f"resources that say nothing removed from runtimePatches; runtimeRef stays {entry.display}, "
            "no runtime derived"
        )
    outcome.node = work


def _move_to_resources_per_node(work: MappingNode, moved: dict[str, Any], outcome: Outcome) -> None:
    trainer = yn.ensure_map(yn.ensure_map(work, "spec"), "trainer")
    yn.set_key(trainer, "resourcesPerNode", yn.from_python(moved))
    outcome.changes.append(f"trainer container resources moved to spec.trainer.resourcesPerNode: {dump(moved)}")
