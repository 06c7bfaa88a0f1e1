"""An object checked as the API server checks a create of it against its CRD's structural schema.

After k8s.io/apiextensions-apiserver at Kubernetes v1.36: strict field validation reports each field
the schema does not declare (``pkg/apiserver/schema/pruning``: ``unknown field "spec.x"``, where a
create with ``fieldValidation=Strict``, kubectl's default, is refused); a null in a field that is not
``nullable`` is dropped, and a field's ``default`` fills it when absent (``pkg/apiserver/schema/
defaulting``); then the value is validated (k8s.io/kube-openapi ``pkg/validation/validate``: types,
``x-kubernetes-int-or-string``, enums, the ``date-time`` format, lengths, bounds, counts, patterns,
``required``), lists of ``x-kubernetes-list-type`` map and set checked for duplicates
(``pkg/apiserver/schema/listtype``), and each CEL rule evaluated on the pruned, defaulted value
(``pkg/apiserver/schema/cel``; ``crd_cel``), rules that read ``oldSelf`` only on an update, so never
here. ``metadata`` at the root is the API server's ObjectMeta, not the schema's: only its ``name`` and
``generateName`` reach the CEL rules. ``status`` is dropped on a create (the CRDs have a status
subresource), so it is not checked.

Every finding names the field path and what the release accepts there.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Mapping
from functools import cache
from typing import Any, Final

from ..values import fieldpath
from ..values.keys import CONTAINER_LISTS
from ..values.records import Record
from . import crd_cel
from .api import JOB_CHAIN, POD_CHAIN
from .crd_schema import SchemaNode, root, shipped_release

_DATE_TIME: Final = re.compile(
    r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})\Z|\d{4}-\d{2}-\d{2}\Z"
)


class SchemaFinding(Record):
    """One place the API server refuses. ``reason``: ``unknown`` (strict field validation),
    ``invalid`` (the schema), ``quantity`` (an int-or-string that fails its pattern: a resource
    quantity), ``required``, ``duplicate`` or ``rule`` (a CEL rule)."""

    __slots__ = ("message", "path", "reason", "value")

    def __init__(self, path: str, reason: str, message: str, value: Any = None) -> None:
        self.path: Final = path
        self.reason: Final = reason
        self.message: Final = message
        self.value: Final = value


def validate(
    obj: Mapping[str, Any],
    trainer_version: str,
    kind: str,
    skip_directives: bool = False,
    own_resources: bool = False,
) -> list[SchemaFinding]:
    """What the API server refuses of ``obj`` (plain data) as a ``kind`` of the release
    ``trainer_version`` stands for. ``skip_directives``: leave keys starting with ``$`` to the rule that
    says more of them (``rules/crd.py``). ``own_resources``: a TrainJob's ContainerPatch
    ``resources`` is the function's own field, which it removes before the TrainJob reaches the
    cluster: left out.

    A TrainJob reaches the schema through Trainer's mutating webhook (``defaulter.trainjob``,
    pkg/webhooks/trainjob_webhook.go, by controller-runtime's ``admission.WithCustomDefaulter``), which
    decodes it into Trainer's Go types and patches it to their JSON: a required field of a Go value
    type is then there with its zero value (``""``, 0, false, ``{}``), a null in a list is that zero
    value, and a quantity written as a number (1.5) is its string (seen on the control plane:
    tests/cluster/test_crd_differential.py)."""
    walker = _Walker(skip_directives, kind == "TrainJob", _container_patches(trainer_version) if own_resources else ())
    node = root(trainer_version, kind)
    top: dict[str, Any] = {}
    for key, value in obj.items():
        if key == "status":
            continue
        if key == "metadata":
            if isinstance(value, Mapping):
                top[key] = {k: value[k] for k in ("name", "generateName") if isinstance(value.get(k), str)}
            continue
        child = node.field(key) if isinstance(key, str) else None
        if child is None:
            walker.unknown((None, str(key)), node, None, key)
        elif value is not None:
            top[key] = walker.walk(value, child, (None, key))
    if node.rules:
        walker.rules(top, node, None)
    return walker.found


# The container resources and resourcesPerNode, whose quantities the function's own rules check and
# say more of (kube/resource_rules.py: the spellings a value most likely means).
_CHECKED_QUANTITIES: Final = re.compile(r".*(\.resources|\.resourcesPerNode)\.(limits|requests)(\.[^.\[]+|\[[^\]]*\])")


def said_elsewhere(finding: SchemaFinding) -> bool:
    """Whether another rule of the function reports ``finding`` with more to say: a container
    resource quantity (``kube/resource_rules.py``)."""
    return finding.reason == "quantity" and _CHECKED_QUANTITIES.fullmatch(finding.path) is not None


# What Go's JSON encoder writes for a value type left zero (a slice or map left nil is null, pruned).
_ZERO: Final[dict[str, Any]] = {"string": "", "integer": 0, "number": 0, "boolean": False, "object": {}}
_INT64: Final = (-(2**63), 2**63 - 1)
_INT_FORMATS: Final = {"int32": (-(2**31), 2**31 - 1), "int64": _INT64}
_NAME_RULE: Final = re.compile(r"\bself\.metadata\.name\b")


def described(finding: SchemaFinding, kind: str, trainer_version: str) -> str:
    """``finding``'s message, naming the CRD whose schema says it."""
    crd = f"Kubeflow Trainer {shipped_release(trainer_version)}'s {kind} CRD"
    if finding.reason == "unknown":
        return finding.message.replace("the CRD", crd, 1)
    return f"{finding.message} ({crd})"


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer" if _INT64[0] <= value <= _INT64[1] else "number outside int64"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, Mapping):
        return "object"
    return type(value).__name__


def _fits(value: Any, node: SchemaNode) -> bool:
    if node.int_or_string:
        return type(value) is str or (type(value) is int and _INT64[0] <= value <= _INT64[1])
    wanted = node.type
    exact = _PLAIN.get(wanted or "")
    if exact is not None:
        return isinstance(value, exact)
    if wanted == "boolean":
        return type(value) is bool
    if wanted == "integer":
        # What kubectl sends of a YAML 1.0 is 1 (Go's JSON encoder), and the API server decodes a
        # number outside int64 as a float64, which is not an integer.
        if type(value) is float and value.is_integer():
            value = int(value)
        return type(value) is int and _INT64[0] <= value <= _INT64[1]
    if wanted == "number":
        return type(value) is int or type(value) is float
    return True


_PLAIN: Final[dict[str, type]] = {"object": dict, "array": list, "string": str}


def _said(value: Any) -> str:
    return (
        json.dumps(value, default=str)
        if isinstance(value, (str, int, float, bool)) or value is None
        else _type_name(value)
    )


# A place in the object as (its parent's place, key or index), made into text only for a finding.
Place = tuple[Any, str | int] | None


def text(place: Place) -> str:
    """``place`` as a field path (``values/fieldpath.py``)."""
    parts: list[str | int] = []
    while place is not None:
        place, part = place
        parts.append(part)
    path = ""
    for part in reversed(parts):
        path = fieldpath.index(path, part) if isinstance(part, int) else fieldpath.child(path, part)
    return path


@cache
def _container_patches(trainer_version: str) -> frozenset[int]:
    """The ids of the TrainJob's ContainerPatch schemas (``spec.runtimePatches[*]...containers[*]``)."""
    node: SchemaNode | None = root(trainer_version, "TrainJob")
    for step in ("spec", "runtimePatches", None, *JOB_CHAIN, None, *POD_CHAIN):
        node = None if node is None else node.items if step is None else node.field(step)
    out = set()
    for field in CONTAINER_LISTS:
        containers = node.field(field) if node is not None else None
        if containers is not None and containers.items is not None:
            out.add(id(containers.items.raw))
    return frozenset(out)


class _Walker:
    __slots__ = ("found", "own_resources", "skip_directives", "zero_values")

    def __init__(self, skip_directives: bool, zero_values: bool, own_resources: Collection[int]) -> None:
        self.found: list[SchemaFinding] = []
        self.skip_directives = skip_directives
        self.zero_values = zero_values
        self.own_resources = own_resources  # the ids of the ContainerPatch schemas whose resources are ours

    def unknown(self, place: Place, parent: SchemaNode, parent_place: Place, key: Any) -> None:
        if self.skip_directives and isinstance(key, str) and key.startswith("$"):
            return
        declared = parent.declared()
        where = text(parent_place) or "the object"
        accepts = f"{where} accepts {', '.join(declared)}" if declared else f"{where} accepts no fields"
        path = text(place)
        self.found.append(
            SchemaFinding(path, "unknown", f'unknown field "{path}": the CRD does not declare it ({accepts})')
        )

    def invalid(self, place: Place | str, message: str, value: Any, reason: str = "invalid") -> None:
        path = place if isinstance(place, str) else text(place)
        self.found.append(SchemaFinding(path, reason, message, value if not isinstance(value, (dict, list)) else None))

    def walk(self, value: Any, node: SchemaNode, place: Place) -> Any:
        """Check ``value`` at ``place``; return it pruned and defaulted, as the CEL rules see it."""
        if value is None:
            if self.zero_values:
                value = _ZERO.get(node.type or "")
            if value is None:
                if not node.nullable:
                    self.invalid(place, f"must be of type {node.type or 'object'}, not null", value)
                return None
        if type(value) is float and self.zero_values and node.int_or_string and node.pattern is not None:
            # A quantity (the int-or-string with a pattern): the webhook's Go Quantity takes a number
            # and writes it back as the string the API server stores (rules/stored_quantities.py).
            return value
        if not _fits(value, node):
            wanted = "an integer or a string" if node.int_or_string else f"of type {node.type}"
            self.invalid(place, f"must be {wanted}, is {_type_name(value)} {_said(value)}", value)
            return value
        if type(value) is dict:
            out: Any = self._object(value, node, place)
        elif type(value) is list:
            out = self._array(value, node, place)
        else:
            if node.scalar_checks:
                self._scalar(value, node, place)
            out = value
        if node.rules:
            self.rules(out, node, place)
        return out

    def rules(self, value: Any, node: SchemaNode, place: Place) -> None:
        messages = {rule.rule: rule.message for rule in node.rules}
        for rule, failure in crd_cel.failures(tuple(messages), value):
            why = "" if failure == "false" else f" ({failure})"
            at: Place | str = place
            said = value
            if place is None and _NAME_RULE.search(rule):
                # The API server reports a rule of the root at the object itself (field path
                # <nil>); the one field it reads is where the user looks.
                at, said = "metadata.name", (value.get("metadata") or {}).get("name")
            self.invalid(
                at if at is not None else "<root>",
                f"{messages[rule] or 'failed rule: ' + rule}{why} (rule: {rule})",
                said,
                "rule",
            )

    def _object(self, value: dict[str, Any], node: SchemaNode, place: Place) -> dict[str, Any]:
        out: dict[str, Any] = {}
        declared = node.properties is not None
        additional = None if declared else node.additional
        for key, child_value in value.items():
            key_text = key if type(key) is str else str(key)
            child = node.field(key_text) if declared else additional
            if child is None:
                if node.preserve_unknown or (node.embedded and key_text in ("apiVersion", "kind", "metadata")):
                    out[key_text] = child_value
                elif key_text == "resources" and id(node.raw) in self.own_resources:
                    pass
                else:
                    self.unknown((place, key_text), node, place, key)
                continue
            if type(child_value) is child.plain:
                out[key_text] = child_value
                continue
            if child_value is None and not child.nullable:
                if child.has_default:
                    out[key_text] = self.walk(_copy(child.default), child, (place, key_text))
                continue  # pruned: a null of a field that is not nullable
            out[key_text] = self.walk(child_value, child, (place, key_text))
        if declared:
            for name, child in node.defaulted():
                if name not in out and name not in value:
                    out[name] = self.walk(_copy(child.default), child, (place, name))
        for name in node.required:
            if name in out:
                continue
            if self.zero_values:
                child = node.field(name)
                zero = _ZERO.get(child.type or "") if child is not None and not child.int_or_string else None
                if child is not None and zero is not None:
                    out[name] = self.walk(_copy(zero), child, (place, name))
                    continue
            self.invalid((place, name), "Required value", None, "required")
        if node.min_properties is not None and len(out) < node.min_properties:
            self.invalid(place, f"must have at least {node.min_properties} fields, has {len(out)}", None)
        if node.max_properties is not None and len(out) > node.max_properties:
            self.invalid(place, f"must have at most {node.max_properties} fields, has {len(out)}", None)
        return out

    def _array(self, value: list[Any], node: SchemaNode, place: Place) -> list[Any]:
        items = node.items
        if items is None:
            out = list(value)
        else:
            plain = items.plain
            out = [v if type(v) is plain else self.walk(v, items, (place, i)) for i, v in enumerate(value)]
        if node.min_items is not None and len(value) < node.min_items:
            self.invalid(place, f"must have at least {node.min_items} items, has {len(value)}", None)
        if node.max_items is not None and len(value) > node.max_items:
            self.invalid(place, f"must have at most {node.max_items} items, has {len(value)}", None)
        if len(out) > 1:
            if node.list_type == "map" and node.map_keys:
                keys = node.map_keys
                self._unique(
                    out, place, lambda v: tuple(_key(v.get(k)) for k in keys) if type(v) is dict else None, node
                )
            elif node.list_type == "set":
                self._unique(out, place, _key, node)
        return out

    def _unique(self, entries: list[Any], place: Place, key_of: Any, node: SchemaNode) -> None:
        """A list of ``x-kubernetes-list-type`` map (keyed by ``map_keys``) or set: each entry once.
        A list keyed by one field is reported at that field of the repeated entry (its line)."""
        seen: dict[Any, int] = {}
        for i, entry in enumerate(entries):
            key = key_of(entry)
            if key is None:
                continue
            first = seen.setdefault(key, i)
            if first == i:
                continue
            earlier = text((place, first))
            if len(node.map_keys) == 1:
                name = node.map_keys[0]
                value = entry.get(name)
                self.invalid(
                    ((place, i), name),
                    f"Duplicate value: {name} {_said(value)} is already at {earlier} (a list keyed by {name})",
                    value,
                    "duplicate",
                )
            else:
                keys = f"keyed by {', '.join(node.map_keys)}" if node.map_keys else "of unique values"
                self.invalid((place, i), f"Duplicate value: the same as {earlier} (a list {keys})", entry, "duplicate")

    def _scalar(self, value: Any, node: SchemaNode, place: Place) -> None:
        if node.enum is not None and value not in node.enum:
            supported = ", ".join(json.dumps(e) for e in node.enum)
            self.invalid(place, f"Unsupported value: {_said(value)}: supported values: {supported}", value)
        if type(value) is str:
            length = len(value)
            if node.min_length is not None and length < node.min_length:
                self.invalid(place, f"must be at least {node.min_length} characters, has {length}", value)
            if node.max_length is not None and length > node.max_length:
                self.invalid(place, f"may not be more than {node.max_length} characters, has {length}", value)
            if node.pattern is not None and not node.pattern.search(value):
                reason = "quantity" if node.int_or_string else "invalid"
                self.invalid(place, f"{_said(value)} should match '{node.raw['pattern']}'", value, reason)
            if node.format == "date-time" and not _DATE_TIME.match(value):
                self.invalid(place, f"{_said(value)} must be a date-time (RFC 3339)", value)
        elif type(value) is int or type(value) is float:
            bounds = _INT_FORMATS.get(node.format or "") if node.type == "integer" else None
            if bounds is not None and not bounds[0] <= value <= bounds[1]:
                self.invalid(place, f"{value} must be of type integer with format {node.format}", value)
            if node.minimum is not None and value < node.minimum:
                self.invalid(place, f"{value} should be greater than or equal to {node.minimum}", value)
            if node.maximum is not None and value > node.maximum:
                self.invalid(place, f"{value} should be less than or equal to {node.maximum}", value)


def _key(value: Any) -> Any:
    """``value`` as a hashable key (lists and maps by their JSON)."""
    if isinstance(value, (dict, list)):
        return json.dumps(value, sort_keys=True, default=str)
    if isinstance(value, bool):
        return ("bool", value)
    return value


def _copy(value: Any) -> Any:
    return json.loads(json.dumps(value)) if isinstance(value, (dict, list)) else value
