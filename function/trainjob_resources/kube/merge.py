"""Merging ResourceRequirements the way Kubeflow Trainer does, and the function's own extensions.

Upstream:

- ``runtimePatches`` (``pkg/runtime/core/trainingruntime.go`` ``mergeRuntimePatches``): a strategic
  merge patch on the JobSet spec. ``limits`` and ``requests`` are maps: merged per resource name.
  ``claims`` has no patch strategy in ``k8s.io/api/core/v1`` ``ResourceRequirements``: a patch's
  list *replaces* the container's.
- ``spec.trainer.resourcesPerNode`` (``newRuntimeInfo``, then ``pkg/util/trainingruntime/trainingruntime.go``
  ``MergeResourceRequirements``): merged onto the trainer container after the patches, ``limits``
  and ``requests`` per key, ``claims`` by ``name``. It is a typed field: the API server prunes a
  ``null`` in it, so a ``null`` there deletes nothing (``without_nulls``).

The function's own extensions, only inside a ContainerPatch's ``resources`` in ``materialize``
mode (they never reach the cluster): a ``null`` quantity deletes that key, ``limits: null``
deletes the whole map, and ``$patch: replace`` inside ``limits`` or ``requests`` replaces the map
instead of merging. ``native`` mode keeps the patch for the API server, which prunes the nulls:
there they delete nothing either.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

# For isinstance: a plain dict, what the reader gives, is found without the Mapping ABC's check.
MAPPINGS: Final = (dict, Mapping)

Requirements = dict[str, Any]
DIRECTIVE = "$patch"
REPLACE = "replace"


def _replaces(value: Any) -> bool:
    return isinstance(value, MAPPINGS) and value.get(DIRECTIVE) == REPLACE


def without_nulls(patch: Mapping[str, Any] | None) -> Requirements | None:
    """What the API server keeps of ``patch``: its nulls pruned, at the top level and in the maps."""
    if patch is None:
        return None
    out: Requirements = {}
    for key, value in patch.items():
        if value is None:
            continue
        out[key] = {k: v for k, v in value.items() if v is not None} if isinstance(value, MAPPINGS) else _copy(value)
    return out


def merge_requirements(
    base: Mapping[str, Any] | None, patch: Mapping[str, Any] | None, claims_by_name: bool = False
) -> Requirements:
    """``patch`` overlaid on ``base``; neither is modified. ``claims_by_name``: merge claims by name
    (``MergeResourceRequirements``, for resourcesPerNode) instead of replacing them (a runtime patch)."""
    out: Requirements = {k: _copy(v) for k, v in (base or {}).items()}
    for key, value in (patch or {}).items():
        if value is None:
            out.pop(key, None)
        elif key in ("limits", "requests") and isinstance(value, MAPPINGS):
            merged = {} if _replaces(value) else dict(out.get(key) or {})
            for name, quantity in value.items():
                if name == DIRECTIVE:
                    continue
                if quantity is None:
                    merged.pop(name, None)
                else:
                    merged[name] = quantity
            out[key] = merged
        elif key == "claims" and isinstance(value, list) and claims_by_name:
            out[key] = _merge_claims(out.get(key) or [], value)
        else:
            out[key] = _copy(value)
    return {k: v for k, v in out.items() if v not in ({}, [])}


def _merge_claims(base: list[Any], patch: list[Any]) -> list[Any]:
    merged = [dict(c) if isinstance(c, MAPPINGS) else c for c in base]
    positions = {c.get("name"): i for i, c in enumerate(merged) if isinstance(c, dict)}
    for claim in patch:
        name = claim.get("name") if isinstance(claim, MAPPINGS) else None
        if name in positions:
            merged[positions[name]].update(claim)
        else:
            positions[name] = len(merged)
            merged.append(dict(claim) if isinstance(claim, MAPPINGS) else claim)
    return merged


def _copy(value: Any) -> Any:
    if isinstance(value, MAPPINGS):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value


def compose_patches(first: Mapping[str, Any] | None, second: Mapping[str, Any] | None) -> Requirements:
    """One runtime patch equal to applying ``first`` then ``second``; ``null`` deletions are kept,
    and the later ``claims`` replace the earlier, as in a runtime patch."""
    out: Requirements = {k: _copy(v) for k, v in (first or {}).items()}
    for key, value in (second or {}).items():
        earlier = out.get(key)
        if key in ("limits", "requests") and isinstance(value, MAPPINGS) and not _replaces(value):
            if key in out and earlier is None:
                out[key] = {DIRECTIVE: REPLACE, **value}  # deleted, then set: only the new keys remain
            elif isinstance(earlier, MAPPINGS):
                out[key] = {**earlier, **value}
            else:
                out[key] = _copy(value)
        else:
            out[key] = _copy(value)
    return out
