"""Merging ResourceRequirements the way Kubeflow Trainer does.

Upstream (``pkg/util/trainingruntime/resourcerequirements.go``) applies a strategic merge patch
with ``limits`` and ``requests`` merged per key (a ``null`` value deletes the key) and ``claims``
merged by ``name``. A patch's ``limits: null`` deletes the whole map, and the strategic-merge
directive ``$patch: replace`` inside ``limits`` or ``requests`` replaces the map instead of merging.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

Requirements = dict[str, Any]
DIRECTIVE = "$patch"
REPLACE = "replace"


def _replaces(value: Any) -> bool:
    return isinstance(value, Mapping) and value.get(DIRECTIVE) == REPLACE


def merge_requirements(base: Mapping[str, Any] | None, patch: Mapping[str, Any] | None) -> Requirements:
    """``patch`` overlaid on ``base``; neither is modified."""
    out: Requirements = {k: _copy(v) for k, v in (base or {}).items()}
    for key, value in (patch or {}).items():
        if value is None:
            out.pop(key, None)
        elif key in ("limits", "requests") and isinstance(value, Mapping):
            merged = {} if _replaces(value) else dict(out.get(key) or {})
            for name, quantity in value.items():
                if name == DIRECTIVE:
                    continue
                if quantity is None:
                    merged.pop(name, None)
                else:
                    merged[name] = quantity
            out[key] = merged
        elif key == "claims" and isinstance(value, list):
            out[key] = _merge_claims(out.get(key) or [], value)
        else:
            out[key] = _copy(value)
    return {k: v for k, v in out.items() if v not in ({}, [])}


def _merge_claims(base: list[Any], patch: list[Any]) -> list[Any]:
    merged = [dict(c) if isinstance(c, Mapping) else c for c in base]
    positions = {c.get("name"): i for i, c in enumerate(merged) if isinstance(c, dict)}
    for claim in patch:
        name = claim.get("name") if isinstance(claim, Mapping) else None
        if name in positions:
            merged[positions[name]].update(claim)
        else:
            positions[name] = len(merged)
            merged.append(dict(claim) if isinstance(claim, Mapping) else claim)
    return merged


def _copy(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value


def compose_patches(first: Mapping[str, Any] | None, second: Mapping[str, Any] | None) -> Requirements:
    """One patch equal to applying ``first`` then ``second``; ``null`` deletions are kept."""
    out: Requirements = {k: _copy(v) for k, v in (first or {}).items()}
    for key, value in (second or {}).items():
        earlier = out.get(key)
        if key in ("limits", "requests") and isinstance(value, Mapping) and not _replaces(value):
            if key in out and earlier is None:
                out[key] = {DIRECTIVE: REPLACE, **value}  # deleted, then set: only the new keys remain
            elif isinstance(earlier, Mapping):
                out[key] = {**earlier, **value}
            else:
                out[key] = _copy(value)
        elif key == "claims" and isinstance(value, list) and isinstance(earlier, list):
            out[key] = _merge_claims(earlier, value)
        else:
            out[key] = _copy(value)
    return out
