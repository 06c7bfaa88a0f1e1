"""The render's "not in the bundle" error, as ``check`` sees it: ``check`` reads the runtimes the
render lacks from the cluster, so a runtime still absent is one the cluster does not have either
(a typo, most likely). The advice to supply it (``--runtimes``, a local-config copy) does not apply
there: say that the cluster has no such runtime, and the closest name it has (Trainer's webhook
refuses a TrainJob whose runtime does not exist: pkg/runtime/core/trainingruntime.go and
clustertrainingruntime.go, ``ValidateObjects``).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from typing import Any

from ..krm.resource_list import Item, ResourceRef, Result
from ..rules.runtime_ref import SUPPLY_RUNTIME
from ..trainer.api import TRAINER_GROUP, TRAINJOB_KIND
from .findings import Live, RuntimeKey, runtime_ref

RULE = "runtime-ref"
NAME_PATH = "spec.runtimeRef.name"


def on_cluster(results: Iterable[Result], items: Iterable[Item], live: Live) -> list[Result]:
    """``results`` with each error about a runtime neither the render nor the cluster has said so."""
    trainjobs = {item.ref: item for item in items if item.kind == TRAINJOB_KIND}
    return [_said_on_cluster(r, trainjobs, live) for r in results]


def _said_on_cluster(result: Result, trainjobs: Mapping[ResourceRef, Item], live: Live) -> Result:
    item = trainjobs.get(result.resource_ref) if result.resource_ref is not None else None
    if item is None or result.rule != RULE or result.field_path != NAME_PATH or SUPPLY_RUNTIME not in result.message:
        return result
    ref = runtime_ref(item.value())
    if ref is None or ref.group != TRAINER_GROUP:
        return result
    key = ref.key(item.namespace)
    if key in live.runtimes:
        return result  # read from the cluster, so not this error: leave what the render said
    close = closest(key, live.runtimes)
    scope = f" in namespace {key[1]!r}" if key[1] else ""
    message = (
        f"{ref.display()}{scope}: the cluster has no such runtime, and the render does not make it: Trainer's "
        "webhook refuses a TrainJob whose runtime does not exist." + (f" Did you mean {close!r}?" if close else "")
    )
    return Result(message, result.severity, result.resource_ref, result.field, result.file, result.rule)


def closest(key: RuntimeKey, installed: Mapping[RuntimeKey, Any]) -> str | None:
    """The cluster's runtime of the same kind and scope whose name is closest to ``key``'s."""
    names = sorted(name for kind, namespace, name in installed if (kind, namespace) == key[:2])
    found = difflib.get_close_matches(key[2], names, n=1, cutoff=0.75)  # as the render's own hint
    return found[0] if found else None
