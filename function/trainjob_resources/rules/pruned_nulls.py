"""A ``null`` the API server prunes before any merge (resourcesPerNode; every ``resources`` in
``native`` mode): it deletes nothing, the runtime's value stays (see ``kube/merge.py``)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from ..resolve.context import TrainJobContext
from ..trainer.effective import RESOURCES_PER_NODE_PATH
from ..values import fieldpath
from ..values.violations import Violation
from .framework import Rule
from .reads import CONTAINER_SITES, MODE, PATCHED_RESOURCES, RESOURCES_PER_NODE
from .stages import PATCHES


def _check(context: TrainJobContext, _: Any) -> list[Violation]:
    found = list(_nulls(context.per_node, RESOURCES_PER_NODE_PATH))
    if context.native:
        for site in context.sites:
            found += _nulls(site.resources, site.resources_path)
    return [
        Violation(
            path,
            "null deletes nothing here: the API server prunes it from this typed field, so the runtime's "
            "value stays (remove it, or change the runtime)",
            severity="warning",
        )
        for path in found
    ]


def _nulls(value: Mapping[str, Any] | None, path: str) -> Iterator[str]:
    for key, child in (value or {}).items():
        if child is None:
            yield fieldpath.child(path, key)
        elif isinstance(child, Mapping):
            yield from (fieldpath.child(fieldpath.child(path, key), k) for k, v in child.items() if v is None)


RULE = Rule(
    "pruned-nulls",
    (PATCHES,),
    "trainjob",
    (MODE, RESOURCES_PER_NODE, CONTAINER_SITES, PATCHED_RESOURCES),
    "nulls in resourcesPerNode (and, in native mode, in resources) that delete nothing",
    _check,
)
