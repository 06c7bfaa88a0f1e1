"""The KRM Functions Specification's I/O: ResourceList in, ResourceList with results out.

A small SDK in the style of kpt's: ``ResourceList``, ``Item`` accessors over node trees, and
``Result``. Pure: bytes in, bytes out; the CLI layer owns stdin, stdout and exit codes.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from . import yamlnodes as yn
from .violations import Severity

RESOURCE_LIST_VERSIONS = ("config.kubernetes.io/v1", "config.kubernetes.io/v1beta1")
PATH_ANNOTATIONS = ("internal.config.kubernetes.io/path", "config.kubernetes.io/path")
INDEX_ANNOTATIONS = ("internal.config.kubernetes.io/index", "config.kubernetes.io/index")
MAX_ITEMS = 100_000
MAX_RESULTS = 10_000


class ResourceListError(ValueError):
    """Input that is not a ResourceList this function can read; nothing can be returned."""


@dataclass(frozen=True)
class ResourceRef:
    api_version: str
    kind: str
    name: str
    namespace: str = ""

    def display(self) -> str:
        where = f"{self.namespace}/" if self.namespace else ""
        return f"{self.kind} {where}{self.name}".strip()


@dataclass(frozen=True)
class FileRef:
    path: str
    index: int | None = None


@dataclass(frozen=True)
class Result:
    message: str
    severity: Severity = "error"
    resource_ref: ResourceRef | None = None
    field_path: str | None = None
    current_value: object = None
    proposed_value: object = None
    file: FileRef | None = None

    def to_python(self) -> dict[str, Any]:
        out: dict[str, Any] = {"message": self.message, "severity": self.severity}
        if self.resource_ref is not None:
            ref = {"apiVersion": self.resource_ref.api_version, "kind": self.resource_ref.kind}
            ref["name"] = self.resource_ref.name
            if self.resource_ref.namespace:
                ref["namespace"] = self.resource_ref.namespace
            out["resourceRef"] = ref
        if self.field_path is not None:
            fld: dict[str, Any] = {"path": self.field_path}
            if self.current_value is not None:
                fld["currentValue"] = self.current_value
            if self.proposed_value is not None:
                fld["proposedValue"] = self.proposed_value
            out["field"] = fld
        if self.file is not None:
            out["file"] = {"path": self.file.path}
            if self.file.index is not None:
                out["file"]["index"] = self.file.index
        return out

    def display(self) -> str:
        """One line for a terminal: file, resource, field, message."""
        parts: list[str] = [self.severity]
        if self.file is not None:
            parts.append(self.file.path if self.file.index in (None, 0) else f"{self.file.path}#{self.file.index}")
        if self.resource_ref is not None and self.resource_ref.display():
            parts.append(self.resource_ref.display())
        if self.field_path:
            parts.append(self.field_path)
        return ": ".join(parts) + ": " + self.message


class Item:
    """One resource of the list, as a mapping node; accessors read it, edits change it in place."""

    __slots__ = ("_value", "node", "problem")

    def __init__(self, node: Node) -> None:
        self.node = node
        self._value: Any = None
        self.problem: str | None = None  # why read() found it unusable; such an item must pass through untouched

    @property
    def api_version(self) -> str:
        return yn.scalar(yn.get(self.node, "apiVersion")) or ""

    @property
    def kind(self) -> str:
        return yn.scalar(yn.get(self.node, "kind")) or ""

    @property
    def group(self) -> str:
        version = self.api_version
        return version.split("/", 1)[0] if "/" in version else ""

    @property
    def name(self) -> str:
        return yn.scalar(yn.get_path(self.node, "metadata", "name")) or ""

    @property
    def namespace(self) -> str:
        return yn.scalar(yn.get_path(self.node, "metadata", "namespace")) or ""

    def annotation(self, key: str) -> str | None:
        return yn.scalar(yn.get_path(self.node, "metadata", "annotations", key))

    def annotations(self) -> dict[str, str]:
        return {k: yn.scalar(v) or "" for k, v in yn.items_of(yn.get_path(self.node, "metadata", "annotations"))}

    def set_annotation(self, key: str, value: str) -> None:
        assert isinstance(self.node, MappingNode)
        metadata = yn.ensure_map(self.node, "metadata")
        yn.set_key(yn.ensure_map(metadata, "annotations"), key, yn.str_node(value))
        self._value = None

    def remove_annotation(self, key: str) -> None:
        annotations = yn.get_path(self.node, "metadata", "annotations")
        if isinstance(annotations, MappingNode):
            yn.delete_key(annotations, key)
            self._value = None

    @property
    def ref(self) -> ResourceRef:
        return ResourceRef(self.api_version, self.kind, self.name, self.namespace)

    @property
    def file(self) -> FileRef | None:
        path = next((p for p in map(self.annotation, PATH_ANNOTATIONS) if p), None)
        if path is None:
            return None
        raw_index = next((i for i in map(self.annotation, INDEX_ANNOTATIONS) if i), None)
        index = int(raw_index) if raw_index is not None and raw_index.isdigit() else None
        return FileRef(path, index)

    def value(self) -> Any:
        """The item as plain Python data, built once and dropped on edit."""
        if self._value is None:
            self._value = yn.to_python(self.node)
        return self._value

    def touched(self) -> None:
        """Call after editing ``node`` directly."""
        self._value = None

    def result(
        self,
        message: str,
        severity: Severity = "error",
        field_path: str | None = None,
        current_value: object = None,
        proposed_value: object = None,
    ) -> Result:
        return Result(message, severity, self.ref, field_path, current_value, proposed_value, self.file)


@dataclass
class ResourceList:
    items: list[Item]
    function_config: Item | None = None
    api_version: str = RESOURCE_LIST_VERSIONS[0]
    results: list[Result] = field(default_factory=list)
    json_format: bool = False

    def has_errors(self) -> bool:
        return any(r.severity == "error" for r in self.results)


def read(data: bytes) -> ResourceList:
    """Parse a ResourceList (YAML or JSON). Raises ResourceListError or yn.YamlInputError."""
    text = yn.decode(data)
    root = yn.compose(text)
    if root is None or (isinstance(root, ScalarNode) and root.tag == yn.NULL_TAG and not root.value):
        raise ResourceListError("input is empty: expected a ResourceList (config.kubernetes.io/v1)")
    if not isinstance(root, MappingNode):
        raise ResourceListError("input is not a ResourceList: the document is not a mapping")
    kind = yn.scalar(yn.get(root, "kind"))
    api_version = yn.scalar(yn.get(root, "apiVersion"))
    if kind != "ResourceList" or api_version not in RESOURCE_LIST_VERSIONS:
        raise ResourceListError(
            f"input is not a ResourceList: got apiVersion {api_version!r}, kind {kind!r}; "
            f"expected kind 'ResourceList' and apiVersion one of {', '.join(RESOURCE_LIST_VERSIONS)}"
        )
    seen_keys: set[str] = set()
    for key, _ in root.value:
        line = key.start_mark.line + 1
        if not isinstance(key, ScalarNode) or key.tag == yn.MERGE_TAG:
            raise ResourceListError(f"ResourceList: only plain keys are supported (line {line})")
        if key.value in seen_keys:
            raise ResourceListError(f"ResourceList: duplicate mapping key {key.value!r} (line {line})")
        seen_keys.add(key.value)
    items_node = yn.get(root, "items")
    items: list[Item] = []
    results: list[Result] = []
    if isinstance(items_node, SequenceNode):
        if len(items_node.value) > MAX_ITEMS:
            raise ResourceListError(f"ResourceList has {len(items_node.value)} items; the limit is {MAX_ITEMS}")
        anchors = "&" in text
        for i, node in enumerate(items_node.value):
            item = Item(node)
            items.append(item)
            problem = _item_problem(node)
            if problem is not None:
                message, path = problem
                item.problem = message
                ref = item.ref if isinstance(node, MappingNode) else None
                results.append(Result(f"items[{i}] {message}", "error", ref, path, None, None, item.file))
            if anchors:
                # An alias may share a node between items; editing one item must not change another.
                item.node = yn.deep_copy(node)
    elif not yn.is_null(items_node):
        raise ResourceListError("ResourceList.items must be a list")
    try:
        yn.check_duplicate_keys(MappingNode(yn.MAP_TAG, [p for p in root.value if p[1] is not items_node]))
    except yn.DuplicateKeyError as err:
        raise ResourceListError(f"ResourceList: {err}") from None
    config_node = yn.get(root, "functionConfig")
    function_config: Item | None = None
    if isinstance(config_node, MappingNode):
        function_config = Item(config_node)
    elif not yn.is_null(config_node):
        raise ResourceListError("ResourceList.functionConfig must be a mapping")
    return ResourceList(items, function_config, api_version, results, json_format=text.lstrip().startswith("{"))


def write(resource_list: ResourceList) -> bytes:
    """The output ResourceList: items, functionConfig and results, as YAML (or JSON for JSON input)."""
    root = MappingNode(yn.MAP_TAG, [], flow_style=False)
    yn.set_key(root, "apiVersion", yn.str_node(resource_list.api_version))
    yn.set_key(root, "kind", yn.str_node("ResourceList"))
    yn.set_key(root, "items", SequenceNode(yn.SEQ_TAG, [i.node for i in resource_list.items], flow_style=False))
    if resource_list.function_config is not None:
        yn.set_key(root, "functionConfig", resource_list.function_config.node)
    if resource_list.results:
        results = shown_results(resource_list.results)
        yn.set_key(root, "results", yn.from_python([r.to_python() for r in results]))
    if resource_list.json_format:
        value = yn.to_python(root)
        try:
            text = json.dumps(value, ensure_ascii=False, indent=2, allow_nan=False)
        except ValueError:
            text = json.dumps(_finite(value), ensure_ascii=False, indent=2, allow_nan=False)
        return (text + "\n").encode()
    return yn.serialize(root).encode()


def shown_results(results: list[Result]) -> list[Result]:
    """All the results, or the MAX_RESULTS most severe (errors first, in order) and a count of the rest."""
    if len(results) <= MAX_RESULTS:
        return results
    rank = {"error": 0, "warning": 1, "info": 2}
    order = sorted(range(len(results)), key=lambda i: (rank.get(results[i].severity, 3), i))
    kept = set(order[:MAX_RESULTS])
    rest = [results[i] for i in order[MAX_RESULTS:]]
    severity = min((r.severity for r in rest), key=lambda s: rank.get(s, 3))
    shown = [r for i, r in enumerate(results) if i in kept]
    return [*shown, Result(f"{len(rest)} more results not shown", severity)]


def _finite(value: Any) -> Any:
    """``value`` with infinities and NaN (``.inf``, ``1.0e+400``), which JSON cannot hold, as YAML's spelling."""
    if isinstance(value, float) and not math.isfinite(value):
        return ".nan" if math.isnan(value) else ".inf" if value > 0 else "-.inf"
    if isinstance(value, dict):
        return {_finite(k) if isinstance(k, float) else k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return value


def _item_problem(node: Node) -> tuple[str, str | None] | None:
    """What makes an item unusable (it is still passed through), with the field at fault."""
    if not isinstance(node, MappingNode):
        return f"is not a mapping (line {node.start_mark.line + 1}); it is passed through unchanged", None
    try:
        yn.check_duplicate_keys(node)
    except yn.DuplicateKeyError as err:
        return str(err), err.path
    if not yn.scalar(yn.get(node, "kind")) or not yn.scalar(yn.get(node, "apiVersion")):
        return "has no apiVersion or kind; it is passed through unchanged", None
    return None
