"""The index stage: once per render, the bundle indexed (``resolve/bundle.py``) and each runtime
checked by the stage's rules."""

from __future__ import annotations

from typing import Final

from ..krm.resource_list import ResourceList, Result
from ..report.reporting import EMPTY_INPUT
from ..resolve import bundle as bundles
from ..resolve.bundle import Bundle
from ..rules import registry
from ..rules.stages import INDEX

_RULES: Final = registry.of(INDEX)


def index(resource_list: ResourceList, platform: frozenset[int], trainer_version: str) -> Bundle:
    """The bundle of ``resource_list`` (``platform``: the ids of the items the platform supplied;
    ``trainer_version``: the release whose CRDs its runtimes are checked against), each runtime's
    findings added to its results."""
    if not resource_list.items:
        resource_list.results.append(Result(EMPTY_INPUT, "warning"))
    bundle = bundles.index(resource_list.items, platform)
    bundle.trainer_version = trainer_version
    for entry in bundle.runtimes.values():
        for v in (v for rule in _RULES for v in rule.findings(bundle, entry)):
            resource_list.results.append(entry.item.result(v.message, v.severity, v.path, v.current_value, rule=v.rule))
    return bundle
