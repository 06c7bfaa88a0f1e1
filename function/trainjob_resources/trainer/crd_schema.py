"""The structural schemas of Kubeflow Trainer's CRDs, as the release the function follows serves them.

The package data ``crds/<release>.json`` holds, per kind, the ``openAPIV3Schema`` of
``manifests/base/crds/trainer.kubeflow.org_trainjobs.yaml`` (and of the two runtimes' CRDs beside it)
at that release, written by ``python -m tests.trainer_crds`` from the release's Go module, less
descriptions; tests/cluster/test_crd_differential.py checks it equals what the control plane serves.
A schema is read the first time a kind of that
release is checked, and each of its nodes compiled the first time a value reaches it: a render
pays for the parts of the schema its objects use, once per process.
"""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path
from typing import Any, Final

from ..values.records import Record

_DATA: Final = Path(__file__).resolve().parent / "crds"
SHIPPED: Final = ("v2.2.0", "v2.2.1", "v2.3.0")


def shipped_release(trainer_version: str) -> str:
    """The release whose CRDs stand for ``trainer_version`` (``trainerVersion``: ``v2.2``, ``v2.2.0``,
    ``v2.2.1``, ``v2.3``, ``v2.3.0``): that release, or the newest shipped patch of its minor."""
    if trainer_version in SHIPPED:
        return trainer_version
    minor = trainer_version.removeprefix("v").split(".")[:2]
    for release in reversed(SHIPPED):
        if release.removeprefix("v").split(".")[:2] == minor:
            return release
    return SHIPPED[-1]


@cache
def _release_data(release: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((_DATA / f"{release}.json").read_text(encoding="utf-8"))
    return data


@cache
def root(trainer_version: str, kind: str) -> SchemaNode:
    """The compiled root of ``kind``'s schema in the release ``trainer_version`` stands for."""
    return SchemaNode(_release_data(shipped_release(trainer_version))["kinds"][kind]["schema"])


def crd_name(trainer_version: str, kind: str) -> str:
    return str(_release_data(shipped_release(trainer_version))["kinds"][kind]["crd"])


class CelRule(Record):
    """One ``x-kubernetes-validations`` entry. ``transition``: it reads ``oldSelf``, so the API server
    evaluates it only on an update (k8s.io/apiextensions-apiserver ``pkg/apiserver/schema/cel``)."""

    __slots__ = ("message", "rule", "transition")

    def __init__(self, rule: str, message: str) -> None:
        self.rule: Final = rule
        self.message: Final = message
        self.transition: Final = re.search(r"\boldSelf\b", rule) is not None


def _go_pattern(pattern: str) -> re.Pattern[str]:
    """``pattern`` as Go's RE2 reads it where the two differ here: a final ``$`` is the end of the
    text, not also the place before a final newline."""
    if pattern.endswith("$") and not pattern.endswith("\\$"):
        pattern = pattern[:-1] + r"\Z"
    return re.compile(pattern)


class SchemaNode:
    """One node of a structural schema (k8s.io/apiextensions-apiserver ``pkg/apiserver/schema``),
    its children compiled on first use."""

    __slots__ = (
        "_additional",
        "_defaulted",
        "_items",
        "_properties",
        "default",
        "embedded",
        "enum",
        "format",
        "has_default",
        "int_or_string",
        "list_type",
        "map_keys",
        "max_items",
        "max_length",
        "max_properties",
        "maximum",
        "min_items",
        "min_length",
        "min_properties",
        "minimum",
        "nullable",
        "pattern",
        "plain",
        "preserve_unknown",
        "properties",
        "raw",
        "required",
        "rules",
        "scalar_checks",
        "type",
    )

    def __init__(self, raw: dict[str, Any]) -> None:
        self.raw: Final = raw
        self.type: Final[str | None] = raw.get("type")
        self.int_or_string: Final = bool(raw.get("x-kubernetes-int-or-string"))
        self.preserve_unknown: Final = bool(raw.get("x-kubernetes-preserve-unknown-fields"))
        self.embedded: Final = bool(raw.get("x-kubernetes-embedded-resource"))
        self.nullable: Final = bool(raw.get("nullable"))
        self.required: Final[tuple[str, ...]] = tuple(raw.get("required", ()))
        self.enum: Final[list[Any] | None] = raw.get("enum")
        self.format: Final[str | None] = raw.get("format")
        self.has_default: Final = "default" in raw
        self.default: Final = raw.get("default")
        self.list_type: Final[str | None] = raw.get("x-kubernetes-list-type")
        self.map_keys: Final[tuple[str, ...]] = tuple(raw.get("x-kubernetes-list-map-keys", ()))
        self.min_items: Final[int | None] = raw.get("minItems")
        self.max_items: Final[int | None] = raw.get("maxItems")
        self.min_length: Final[int | None] = raw.get("minLength")
        self.max_length: Final[int | None] = raw.get("maxLength")
        self.min_properties: Final[int | None] = raw.get("minProperties")
        self.max_properties: Final[int | None] = raw.get("maxProperties")
        self.minimum: Final[int | float | None] = raw.get("minimum")
        self.maximum: Final[int | float | None] = raw.get("maximum")
        pattern = raw.get("pattern")
        self.pattern: Final = _go_pattern(pattern) if isinstance(pattern, str) else None
        # The rules the API server evaluates on a create: those that read oldSelf only run on an update.
        self.rules: Final = tuple(
            rule
            for rule in (CelRule(r["rule"], r.get("message", "")) for r in raw.get("x-kubernetes-validations", ()))
            if not rule.transition
        )
        self.properties: Final[dict[str, Any] | None] = raw.get("properties")
        self.scalar_checks: Final = any(
            x is not None
            for x in (
                self.enum,
                self.pattern,
                self.min_length,
                self.max_length,
                self.minimum,
                self.maximum,
                self.format,
            )
        )
        # The Python type a value of this node passes as with nothing more to check (a string, an
        # integer or a boolean without bounds, pattern, enum or rule), or None.
        plain = {"string": str, "boolean": bool}.get(self.type or "")
        self.plain: Final = (
            plain if plain is not None and not (self.scalar_checks or self.rules or self.int_or_string) else None
        )
        self._properties: dict[str, SchemaNode] = {}
        self._defaulted: list[tuple[str, SchemaNode]] | None = None
        self._items: SchemaNode | None = None
        self._additional: SchemaNode | None = None

    def field(self, name: str) -> SchemaNode | None:
        node = self._properties.get(name)
        if node is None:
            declared = self.properties
            if declared is None or name not in declared:
                return None
            node = self._properties[name] = SchemaNode(declared[name])
        return node

    @property
    def has_properties(self) -> bool:
        return self.properties is not None

    def declared(self) -> list[str]:
        """The names of the declared fields, in the CRD's order."""
        return list(self.properties or ())

    def defaulted(self) -> list[tuple[str, SchemaNode]]:
        """The declared fields that have a default."""
        if self._defaulted is None:
            self._defaulted = [
                (name, node) for name in self.declared() if (node := self.field(name)) is not None and node.has_default
            ]
        return self._defaulted

    @property
    def items(self) -> SchemaNode | None:
        if self._items is None:
            raw = self.raw.get("items")
            if not isinstance(raw, dict):
                return None
            self._items = SchemaNode(raw)
        return self._items

    @property
    def additional(self) -> SchemaNode | None:
        """The schema of a map's values (``additionalProperties``), or None."""
        if self._additional is None:
            raw = self.raw.get("additionalProperties")
            if not isinstance(raw, dict):
                return None
            self._additional = SchemaNode(raw)
        return self._additional
