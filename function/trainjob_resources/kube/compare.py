"""Runtimes compared as the API server stores them: a copy with its CRD's defaults applied, against
the installed runtime or a TrainJob's snapshot, field by field.

Pure. ``defaulted`` follows the structural-schema defaulting of kube-apiserver for custom resources
(k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting/algorithm.go, ``Default``): a
property with a ``default`` that is absent (or null where the schema is not nullable) gets a copy
of it, then every present property, additionalProperties value and list item is defaulted by its
own schema. ``differing`` ignores what only one side spells out empty: a snapshot is the runtime as
Trainer's Go types marshal it (pkg/runtime/core/snapshot.go, ``createRuntimeSnapshot``), which adds
empty structs (``resources: {}``) and drops empty values; quantities are compared by value.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Mapping
from typing import Any

from ..values import fieldpath
from .quantity import QuantityError, parse_quantity

# Maps whose values are quantities (a container's requests and limits, a pod's overhead, resourcesPerNode's).
QUANTITY_MAPS = frozenset({"requests", "limits", "overhead"})
MAX_FIELDS = 8  # differing fields named in one message


def version_schema(crd: Mapping[str, Any] | None, version: str) -> Mapping[str, Any] | None:
    """The openAPIV3Schema of ``version`` in a CustomResourceDefinition, or None."""
    spec = crd.get("spec") if isinstance(crd, Mapping) else None
    for entry in spec.get("versions") or [] if isinstance(spec, Mapping) else []:
        if isinstance(entry, Mapping) and entry.get("name") == version:
            schema = entry.get("schema")
            found = schema.get("openAPIV3Schema") if isinstance(schema, Mapping) else None
            return found if isinstance(found, Mapping) else None
    return None


def defaulted(value: Any, schema: Mapping[str, Any] | None) -> Any:
    """A copy of ``value`` with the schema's defaults applied (``Default`` in algorithm.go)."""
    out = copy.deepcopy(value)
    if schema is not None:
        _default(out, schema)
    return out


def _default(value: Any, schema: Mapping[str, Any]) -> None:
    if isinstance(value, dict):
        properties = schema.get("properties")
        properties = properties if isinstance(properties, Mapping) else {}
        for key, prop in properties.items():
            if not isinstance(prop, Mapping) or "default" not in prop:
                continue
            if key not in value or (value[key] is None and not prop.get("nullable")):
                value[key] = copy.deepcopy(prop["default"])
        additional = schema.get("additionalProperties")
        for key, item in value.items():
            prop = properties.get(key)
            if isinstance(prop, Mapping):
                _default(item, prop)
            elif isinstance(additional, Mapping):
                _default(item, additional)
    elif isinstance(value, list):
        items = schema.get("items")
        if isinstance(items, Mapping):
            for item in value:
                _default(item, items)


def _empty(value: Any) -> bool:
    return value is None or value == {} or value == []


def _same_quantity(a: Any, b: Any) -> bool:
    try:
        return parse_quantity(a) == parse_quantity(b)
    except (QuantityError, TypeError):
        return False


def _keyed(items: list[Any]) -> dict[str, Any] | None:
    """A list of maps that each have a distinct ``name`` (containers, replicated jobs, env), by name."""
    names = [item.get("name") if isinstance(item, Mapping) else None for item in items]
    if not items or not all(isinstance(n, str) for n in names) or len(set(names)) != len(names):
        return None
    return dict(zip(names, items, strict=True))  # type: ignore[arg-type]


def differing(new: Any, old: Any, path: str = "", quantities: bool = False) -> list[str]:
    """The field paths where ``new`` and ``old`` differ (lists of named maps matched by name)."""
    return [where for where, _, _ in _differences(new, old, path, quantities)]


def first_written_difference(new: Any, old: Any, path: str = "", quantities: bool = False) -> tuple[str, Any] | None:
    """The first field where ``new`` and ``old`` differ, named as ``new`` has it, with ``new``'s value
    there: where ``old`` holds a key, a named list entry or an item that ``new`` lacks, the field of
    ``new`` that would hold it. Nothing of ``old`` is returned, not even a key or a name (a tenant's
    copy compared with the platform's runtime learns where its own text differs, never what the
    platform's says)."""
    if _empty(new) and _empty(old):
        return None
    if isinstance(new, Mapping) and isinstance(old, Mapping):
        for key in sorted(new, key=str):
            found = first_written_difference(
                new[key], old.get(key), fieldpath.child(path, str(key)), quantities or key in QUANTITY_MAPS
            )
            if found is not None:
                return found
        return (path, new) if any(not _empty(old[key]) for key in old if key not in new) else None
    if isinstance(new, list) and isinstance(old, list):
        new_keyed, old_keyed = _keyed(new), _keyed(old)
        if new_keyed is not None and old_keyed is not None:
            for name, entry in new_keyed.items():
                found = first_written_difference(entry, old_keyed.get(name), f"{path}[{name}]")
                if found is not None:
                    return found
            return (path, new) if any(name not in new_keyed for name in old_keyed) else None
        if len(new) != len(old):
            return path, new
        for i, (a, b) in enumerate(zip(new, old, strict=True)):
            found = first_written_difference(a, b, fieldpath.index(path, i))
            if found is not None:
                return found
        return None
    if new == old or (quantities and _same_quantity(new, old)):
        return None
    return path, new


def _differences(new: Any, old: Any, path: str, quantities: bool) -> Iterator[tuple[str, Any, Any]]:
    if _empty(new) and _empty(old):
        return
    if isinstance(new, Mapping) and isinstance(old, Mapping):
        for key in sorted({*new, *old}, key=str):
            yield from _differences(
                new.get(key), old.get(key), fieldpath.child(path, str(key)), quantities or key in QUANTITY_MAPS
            )
        return
    if isinstance(new, list) and isinstance(old, list):
        new_keyed, old_keyed = _keyed(new), _keyed(old)
        if new_keyed is not None and old_keyed is not None:
            for name in [*new_keyed, *(n for n in old_keyed if n not in new_keyed)]:
                yield from _differences(new_keyed.get(name), old_keyed.get(name), f"{path}[{name}]", False)
            return
        if len(new) != len(old):
            yield path, new, old
            return
        for i, (a, b) in enumerate(zip(new, old, strict=True)):
            yield from _differences(a, b, fieldpath.index(path, i), False)
        return
    if new == old or (quantities and _same_quantity(new, old)):
        return
    yield path, new, old


def listed(paths: list[str]) -> str:
    shown = ", ".join(paths[:MAX_FIELDS])
    more = len(paths) - MAX_FIELDS
    return f"{shown} and {more} more" if more > 0 else shown
