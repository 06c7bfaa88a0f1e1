"""What the API server refuses of a TrainJob by its CRD's structural schema and CEL rules
(``trainer/crd_validate.py``, against ``manifests/base/crds/trainer.kubeflow.org_trainjobs.yaml`` of
the release ``trainerVersion`` names): a field the release does not declare (``terminationGracePeriodSeconds``
in a PodSpecPatch on v2.2), a wrong type, a value outside an enum or a bound (``activeDeadlineSeconds``
at least 1, MaxItems, MaxLength), a duplicate list key, a CEL rule that fails (``metadata.name`` an
RFC 1035 label, ``managedBy`` one of two values, the initializers' ``storageUri`` on v2.3).

A ContainerPatch's ``resources`` is the function's own field, which it removes before the TrainJob
reaches the cluster (the patches' rules check it), so it is left out; strategic-merge directives
(``$patch``...) are the ``crd`` rule's, which says more of them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...trainer.api import JOB_CHAIN, POD_CHAIN
from ...trainer.crd_validate import described, said_elsewhere, validate
from ...values.keys import CONTAINER_LISTS
from ...values.violations import Violation
from ..context import TrainJobContext
from .framework import Rule
from .stages import RUNTIME_FREE, TRAINJOB


def without_resources(trainjob: Mapping[str, Any]) -> Mapping[str, Any]:
    """``trainjob`` with every ContainerPatch's ``resources`` left out (copies along the way only
    where one is there)."""
    spec = trainjob.get("spec")
    patches = spec.get("runtimePatches") if isinstance(spec, Mapping) else None
    if not isinstance(patches, list):
        return trainjob
    changed = False
    new_patches: list[Any] = []
    for patch in patches:
        new_patch = _patch_without(patch)
        changed |= new_patch is not patch
        new_patches.append(new_patch)
    if not changed:
        return trainjob
    assert isinstance(spec, Mapping)
    return {**trainjob, "spec": {**spec, "runtimePatches": new_patches}}


def _patch_without(patch: Any) -> Any:
    """The patch without its ContainerPatches' resources (itself when none has them)."""
    return _along(patch, (*JOB_CHAIN, None, *POD_CHAIN))


def _along(value: Any, chain: tuple[str | None, ...]) -> Any:
    """``value`` with ``resources`` left out of each container below ``chain`` (None: each list entry)."""
    if not chain:
        return _pod_without(value)
    head, rest = chain[0], chain[1:]
    if head is None:
        if not isinstance(value, list):
            return value
        out = [_along(v, rest) for v in value]
        return out if any(a is not b for a, b in zip(out, value, strict=True)) else value
    if not isinstance(value, Mapping) or head not in value:
        return value
    child = _along(value[head], rest)
    return value if child is value[head] else {**value, head: child}


def _pod_without(pod: Any) -> Any:
    if not isinstance(pod, Mapping):
        return pod
    out = pod
    for field in CONTAINER_LISTS:
        containers = pod.get(field)
        if isinstance(containers, list) and any(isinstance(c, Mapping) and "resources" in c for c in containers):
            stripped = [
                {k: v for k, v in c.items() if k != "resources"} if isinstance(c, Mapping) else c for c in containers
            ]
            out = {**out, field: stripped}
    return out


def _check(context: TrainJobContext, _: Any) -> list[Violation]:
    version = context.config.trainer_version
    return [
        Violation(
            f.path, f"{described(f, 'TrainJob', version)}: the API server refuses the TrainJob", current_value=f.value
        )
        for f in validate(without_resources(context.raw), version, "TrainJob", skip_directives=True)
        if not said_elsewhere(f)
    ]


RULE = Rule(
    "trainjob-schema",
    (RUNTIME_FREE, TRAINJOB),
    "trainjob",
    (),  # reads the TrainJob as written: never remembered
    "what the API server refuses of a TrainJob by its CRD's schema and CEL rules (unknown fields, types, "
    "enums, bounds, duplicate keys, the CEL rules)",
    _check,
)
