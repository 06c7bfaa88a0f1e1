"""Every rule, registered once, in the order their findings are reported. A stage runs its rules
in this order (``of``); a new rule is one module and one line here."""

from __future__ import annotations

from typing import Final

from . import (
    allowed_resources,
    claims,
    container_site,
    crd,
    derived_schema,
    dropped_claims,
    effective_resources,
    flux_num_nodes,
    foreign_runtime,
    ignored_per_node,
    initializers,
    job_site,
    limit_range,
    managers,
    max_per_container,
    max_per_role,
    name_clash,
    native_claims,
    native_per_node,
    output_bound,
    plausible_quantities,
    pod_claims,
    pod_level,
    policy_pods,
    pruned_nulls,
    records,
    repointed,
    resource_quota,
    resource_summary,
    role_labels,
    runtime_free,
    runtime_name,
    runtime_readable,
    runtime_ref,
    runtime_resources,
    runtime_schema,
    runtime_webhook,
    shadowed_by_per_node,
    stored_quantities,
    tenant_cluster_runtime,
    trainer_changed,
    trainjob_api,
    trainjob_schema,
    unmovable,
)
from .framework import Read, Rule, Stage, reads_of

RULES: Final[tuple[Rule, ...]] = (
    runtime_readable.RULE,
    runtime_resources.RULE,
    runtime_schema.RULE,
    records.RULE,
    trainjob_api.RULE,
    runtime_ref.RULE,
    crd.RULE,
    trainjob_schema.RULE,
    foreign_runtime.RULE,
    runtime_free.RULE,
    initializers.RULE,
    flux_num_nodes.RULE,
    role_labels.RULE,
    managers.RULE,
    job_site.RULE,
    ignored_per_node.RULE,
    pruned_nulls.RULE,
    container_site.RULE,
    pod_claims.RULE,
    claims.RULE,
    native_claims.RULE,
    dropped_claims.RULE,
    native_per_node.CLAIMS_RULE,
    shadowed_by_per_node.RULE,
    native_per_node.RULE,
    unmovable.RULE,
    plausible_quantities.RULE,
    pod_level.RULE,
    effective_resources.RULE,
    policy_pods.RULE,
    limit_range.RULE,
    resource_quota.RULE,
    max_per_container.RULE,
    allowed_resources.RULE,
    max_per_role.RULE,
    resource_summary.RULE,
    tenant_cluster_runtime.RULE,
    runtime_name.RULE,
    name_clash.RULE,
    runtime_webhook.RULE,
    derived_schema.RULE,
    output_bound.RULE,
    trainer_changed.RULE,
    stored_quantities.RULE,
    repointed.RULE,
)


def of(stage: Stage) -> tuple[Rule, ...]:
    """The rules that run in ``stage``, in registry order."""
    return tuple(rule for rule in RULES if stage in rule.stages)


def reads(stage: Stage, *more: Read) -> tuple[Read, ...]:
    """What ``stage``'s rules read (and ``more``): the key its results are remembered under."""
    return reads_of(of(stage), *more)
