"""The validate stages of a TrainJob whose runtime is resolved: the trainjob stage, the patches and
effective stages (remembered together), and the policy stage."""

from __future__ import annotations

from functools import partial
from typing import Final

from ..resolve.context import TrainJobContext
from ..rules import policy_stage, registry
from ..rules.framework import run
from ..rules.reads import CONTAINER_SITES, MODE, PATCHED_RESOURCES, RESOURCES_PER_NODE, RUNTIME, TOPOLOGY
from ..rules.stages import EFFECTIVE, PATCHES, POLICY, TRAINJOB
from ..trainer.effective import ContainerKey, Effective, effective_resources
from ..values.violations import Violation

_TRAINJOB_RULES: Final = registry.of(TRAINJOB)
_PATCH_RULES: Final = registry.of(PATCHES)
# The effective resources, remembered with the patches' findings, read the sites, the resources as
# written, resourcesPerNode, the topology and the mode besides.
_PATCH_READS: Final = registry.reads(
    PATCHES, RUNTIME, MODE, CONTAINER_SITES, PATCHED_RESOURCES, RESOURCES_PER_NODE, TOPOLOGY
)
_EFFECTIVE_RULES: Final = registry.of(EFFECTIVE)
_EFFECTIVE_READS: Final = registry.reads(EFFECTIVE)


def trainjob(context: TrainJobContext) -> list[Violation]:
    """The trainjob stage's findings (never remembered)."""
    return run(_TRAINJOB_RULES, context)


def patches(context: TrainJobContext) -> tuple[list[Violation], dict[ContainerKey, Effective]]:
    """The patches stage's findings and, when none is an error, the effective resources of every
    container a patch or resourcesPerNode sizes, with the effective stage's findings; remembered."""
    return context.memo.remember(PATCHES, _PATCH_READS, context, lambda: _patches(context))


def policy(context: TrainJobContext) -> list[Violation]:
    """The policy stage's findings (``rules/policy_stage.py``), remembered."""
    return context.memo.remember(POLICY, policy_stage.READS, context, lambda: policy_stage.findings(context))


def _patches(context: TrainJobContext) -> tuple[list[Violation], dict[ContainerKey, Effective]]:
    out = run(_PATCH_RULES, context)
    if any(v.severity == "error" for v in out):
        return out, {}
    entry, memo = context.runtime, context.memo
    effective = effective_resources(
        entry.jobs,
        context.sites,
        context.per_node,
        context.topo,
        native=context.native,
        per_node_replaces=context.release.per_node_replaces,
    )
    for one in effective.values():
        out += memo.remember(EFFECTIVE, _EFFECTIVE_READS, context, partial(_effective_findings, context, one), one)
    return out, effective


def _effective_findings(context: TrainJobContext, effective: Effective) -> list[Violation]:
    return [v for rule in _EFFECTIVE_RULES for v in rule.findings(context, effective)]
