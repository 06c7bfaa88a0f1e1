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
from collections.abc import Mapping
from typing import Any, Final

from ..values import fieldpath
from ..values.records import Record
from . import crd_cel
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
    obj: Mapping[str, Any], trainer_version: str, kind: str, skip_directives: bool = False
) -> list[SchemaFinding]:
    """What the API server refuses of ``obj`` (plain data) as a ``kind`` of the release
    ``trainer_version`` stands for. ``skip_directives``: leave keys starting with ``$`` to the rule that
    says more of them (``checks/rules/crd.py``).

    A TrainJob reaches the schema through Trainer's mutating webhook (``defaulter.trainjob``,
    pkg/webhooks/trainjob_webhook.go, by controller-runtime's ``admission.WithCustomDefaulter``), which
    decodes it into Trainer's Go types and patches it to their JSON: a required field of a Go value
    type is then there with its zero value (``""``, 0, false, ``{}``), and a null in a list is that
    zero value (seen on the control plane: tests/cluster/test_crd_differential.py)."""
    walker = _Walker(skip_directives, zero_values=kind == "TrainJob")
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
        path = fieldpath.child("", str(key))
        if child is None:
            walker.unknown(path, node, "", key)
        elif value is not None:
            top[key] = walker.walk(value, child, path)
    walker.rules(top, node, "")
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
        return isinstance(value, (int, str)) and not isinstance(value, bool)
    wanted = node.type
    if wanted is None:
        return True
    if wanted == "object":
        return isinstance(value, Mapping)
    if wanted == "array":
        return isinstance(value, list)
    if wanted == "string":
        return isinstance(value, str)
    if wanted == "boolean":
        return isinstance(value, bool)
    if wanted == "integer":
        # What kubectl sends of a YAML 1.0 is 1 (Go's JSON encoder), and the API server decodes a
        # number outside int64 as a float64, which is not an integer.
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        return isinstance(value, int) and not isinstance(value, bool) and _INT64[0] <= value <= _INT64[1]
    if wanted == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return True


def _said(value: Any) -> str:
    return (
        json.dumps(value, default=str)
        if isinstance(value, (str, int, float, bool)) or value is None
        else _type_name(value)
    )


class _Walker:
    __slots__ = ("found", "skip_directives", "zero_values")

    def __init__(self, skip_directives: bool, zero_values: bool) -> None:
        self.found: list[SchemaFinding] = []
        self.skip_directives = skip_directives
        self.zero_values = zero_values

    def unknown(self, path: str, parent: SchemaNode, parent_path: str, key: Any) -> None:
        if self.skip_directives and isinstance(key, str) and key.startswith("$"):
            return
        declared = parent.declared()
        where = parent_path or "the object"
        accepts = f"{where} accepts {', '.join(declared)}" if declared else f"{where} accepts no fields"
        self.found.append(
            SchemaFinding(path, "unknown", f'unknown field "{path}": the CRD does not declare it ({accepts})')
        )

    def invalid(self, path: str, message: str, value: Any, reason: str = "invalid") -> None:
        self.found.append(SchemaFinding(path, reason, message, value if not isinstance(value, (dict, list)) else None))

    def walk(self, value: Any, node: SchemaNode, path: str) -> Any:
        """Check ``value`` at ``path``; return it pruned and defaulted, as the CEL rules see it."""
        if value is None and self.zero_values:
            value = _ZERO.get(node.type or "")
        if value is None:
            if not node.nullable:
                self.invalid(path, f"must be of type {node.type or 'object'}, not null", value)
            return None
        if not _fits(value, node):
            wanted = "an integer or a string" if node.int_or_string else f"of type {node.type}"
            self.invalid(path, f"must be {wanted}, is {_type_name(value)} {_said(value)}", value)
            return value
        if isinstance(value, Mapping):
            out: Any = self._object(value, node, path)
        elif isinstance(value, list):
            out = self._array(value, node, path)
        else:
            self._scalar(value, node, path)
            out = value
        if node.rules:
            self.rules(out, node, path)
        return out

    def rules(self, value: Any, node: SchemaNode, path: str) -> None:
        for rule in node.rules:
            if rule.transition:
                continue
            failure = crd_cel.failure(rule.rule, value)
            if failure is not None:
                why = "" if failure == "false" else f" ({failure})"
                at, said = path, value
                if not path and _NAME_RULE.search(rule.rule):
                    # The API server reports a rule of the root at the object itself (field path
                    # <nil>); the one field it reads is where the user looks.
                    at, said = "metadata.name", (value.get("metadata") or {}).get("name")
                self.invalid(
                    at or "<root>",
                    f"{rule.message or 'failed rule: ' + rule.rule}{why} (rule: {rule.rule})",
                    said,
                    "rule",
                )

    def _object(self, value: Mapping[str, Any], node: SchemaNode, path: str) -> dict[str, Any]:
        out: dict[str, Any] = {}
        additional = node.additional
        for key, child_value in value.items():
            key_text = str(key)
            child_path = fieldpath.child(path, key_text)
            child = node.field(key_text) if node.has_properties else additional
            if child is None:
                if node.preserve_unknown or (node.embedded and key_text in ("apiVersion", "kind", "metadata")):
                    out[key_text] = child_value
                else:
                    self.unknown(child_path, node, path, key)
                continue
            if child_value is None and not child.nullable:
                if child.has_default:
                    out[key_text] = self.walk(_copy(child.default), child, child_path)
                continue  # pruned: a null of a field that is not nullable
            out[key_text] = self.walk(child_value, child, child_path)
        if node.has_properties:
            for name in node.declared():
                if name not in out and name not in value:
                    child = node.field(name)
                    if child is not None and child.has_default:
                        out[name] = self.walk(_copy(child.default), child, fieldpath.child(path, name))
        for name in node.required:
            if name not in out and self.zero_values:
                child = node.field(name)
                zero = _ZERO.get(child.type or "") if child is not None and not child.int_or_string else None
                if child is not None and zero is not None:
                    out[name] = self.walk(_copy(zero), child, fieldpath.child(path, name))
            if name not in out:
                self.invalid(fieldpath.child(path, name), "Required value", None, "required")
        count = len(out)
        if node.min_properties is not None and count < node.min_properties:
            self.invalid(path, f"must have at least {node.min_properties} fields, has {count}", None)
        if node.max_properties is not None and count > node.max_properties:
            self.invalid(path, f"must have at most {node.max_properties} fields, has {count}", None)
        return out

    def _array(self, value: list[Any], node: SchemaNode, path: str) -> list[Any]:
        items = node.items
        out = [self.walk(v, items, fieldpath.index(path, i)) if items is not None else v for i, v in enumerate(value)]
        if node.min_items is not None and len(value) < node.min_items:
            self.invalid(path, f"must have at least {node.min_items} items, has {len(value)}", None)
        if node.max_items is not None and len(value) > node.max_items:
            self.invalid(path, f"must have at most {node.max_items} items, has {len(value)}", None)
        if node.list_type == "map" and node.map_keys:
            self._unique(
                out,
                path,
                lambda v: tuple(_key(v.get(k)) for k in node.map_keys) if isinstance(v, Mapping) else None,
                node,
            )
        elif node.list_type == "set":
            self._unique(out, path, _key, node)
        return out

    def _unique(self, entries: list[Any], path: str, key_of: Any, node: SchemaNode) -> None:
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
            at, earlier = fieldpath.index(path, i), fieldpath.index(path, first)
            if len(node.map_keys) == 1:
                name = node.map_keys[0]
                value = entry.get(name)
                self.invalid(
                    fieldpath.child(at, name),
                    f"Duplicate value: {name} {_said(value)} is already at {earlier} (a list keyed by {name})",
                    value,
                    "duplicate",
                )
            else:
                keys = f"keyed by {', '.join(node.map_keys)}" if node.map_keys else "of unique values"
                self.invalid(at, f"Duplicate value: the same as {earlier} (a list {keys})", entry, "duplicate")

    def _scalar(self, value: Any, node: SchemaNode, path: str) -> None:
        if node.enum is not None and value not in node.enum:
            supported = ", ".join(json.dumps(e) for e in node.enum)
            self.invalid(path, f"Unsupported value: {_said(value)}: supported values: {supported}", value)
        if isinstance(value, str):
            length = len(value)
            if node.min_length is not None and length < node.min_length:
                self.invalid(path, f"must be at least {node.min_length} characters, has {length}", value)
            if node.max_length is not None and length > node.max_length:
                self.invalid(path, f"may not be more than {node.max_length} characters, has {length}", value)
            if node.pattern is not None and not node.pattern.search(value):
                reason = "quantity" if node.int_or_string else "invalid"
                self.invalid(path, f"{_said(value)} should match '{node.raw['pattern']}'", value, reason)
            if node.format == "date-time" and not _DATE_TIME.match(value):
                self.invalid(path, f"{_said(value)} must be a date-time (RFC 3339)", value)
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            bounds = _INT_FORMATS.get(node.format or "") if node.type == "integer" else None
            if bounds is not None and not bounds[0] <= value <= bounds[1]:
                self.invalid(path, f"{value} must be of type integer with format {node.format}", value)
            if node.minimum is not None and value < node.minimum:
                self.invalid(path, f"{value} should be greater than or equal to {node.minimum}", value)
            if node.maximum is not None and value > node.maximum:
                self.invalid(path, f"{value} should be less than or equal to {node.maximum}", value)


def _key(value: Any) -> Any:
    """``value`` as a hashable key (lists and maps by their JSON)."""
    if isinstance(value, (dict, list)):
        return json.dumps(value, sort_keys=True, default=str)
    if isinstance(value, bool):
        return ("bool", value)
    return value


def _copy(value: Any) -> Any:
    return json.loads(json.dumps(value)) if isinstance(value, (dict, list)) else value
