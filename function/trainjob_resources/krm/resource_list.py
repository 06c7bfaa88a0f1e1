"""The KRM Functions Specification's I/O: ResourceList in, ResourceList with results out.

A small SDK in the style of kpt's: ``ResourceList`` read (a block list item by item, each item's
text kept) and written, its items (``item.Item``) and results (``results.Result``). Pure: bytes in,
bytes out; the CLI layer owns stdin, stdout and exit codes.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from ..values.keys import RESOURCE_LIST_VERSIONS
from ..values.records import MutableRecord
from ..yamltext import layout
from ..yamltext import yamlnodes as yn

# Besides what this module uses, the names the package reads from here (``X as X``): the item, the
# results and the policy inputs, each defined in its own module.
from . import results as results_io
from .item import Item as Item
from .item import ItemState as ItemState
from .item import NotSplittable as NotSplittable
from .item import document_of, flag
from .policy_inputs import POLICY_INPUTS as POLICY_INPUTS
from .policy_inputs import is_policy_input as is_policy_input
from .policy_inputs import list_items as list_items
from .policy_inputs import merge_problem as merge_problem
from .results import MAX_RESULTS as MAX_RESULTS
from .results import Field as Field
from .results import FileRef as FileRef
from .results import ResourceRef as ResourceRef
from .results import Result as Result
from .results import shown_results as shown_results

MAX_ITEMS = 100_000


class ResourceListError(ValueError):
    """Input that is not a ResourceList this function can read; nothing can be returned."""


class ResourceList(MutableRecord):
    __slots__ = ("api_version", "function_config", "items", "json_format", "layout", "results")

    def __init__(
        self,
        items: list[Item],
        function_config: Item | None = None,
        api_version: str = RESOURCE_LIST_VERSIONS[0],
        results: list[Result] | None = None,
        json_format: bool = False,
        layout: layout.Layout | None = None,
    ) -> None:
        self.items = items
        self.function_config = function_config
        self.api_version = api_version
        self.results = [] if results is None else results
        self.json_format = json_format
        self.layout = layout  # the input's text, when the output can reuse it

    def has_errors(self) -> bool:
        return any(r.severity == "error" for r in self.results)


# Kinds whose node trees stay in memory after reading: what the bundle index looks at again.
_KEPT_GROUPS = {"trainer.kubeflow.org"}
_KEPT_CORE_KINDS = {"LimitRange", "ResourceQuota"}


def read(data: bytes, by_items: bool = True) -> ResourceList:
    """Parse a ResourceList (YAML or JSON). Raises ResourceListError or yn.YamlInputError.

    A block-style list is read item by item from its text (see layout.py); anything else, or an
    item that does not read on its own, is read as one whole document. A TrainJob's text is parsed
    only when it is processed (a check of every one up front would parse it twice): when one of
    them does not parse on its own, its first reading, or ``write``, raises NotSplittable, and the
    caller starts again from ``read(data, by_items=False)``, as if the check had been made here."""
    text = yn.decode(data)
    shape = layout.split(text) if by_items else None
    if shape is not None:
        try:
            return _read_by_items(text, shape)
        except (yn.YamlInputError, NotSplittable):
            pass  # the whole document says precisely what is wrong, and where
    return _read_whole(text)


def _check_root(root: Node | None) -> tuple[MappingNode, str]:
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
    return root, api_version


def _function_config(root: MappingNode, items_node: Node | None) -> Item | None:
    try:
        yn.check_duplicate_keys(MappingNode(yn.MAP_TAG, [p for p in root.value if p[1] is not items_node]))
    except yn.DuplicateKeyError as err:
        raise ResourceListError(f"ResourceList: {err}") from None
    config_node = yn.get(root, "functionConfig")
    if isinstance(config_node, MappingNode):
        merged = yn.merge_key_path(config_node)
        if merged is not None:
            raise ResourceListError(
                f"ResourceList.functionConfig has a YAML merge key (<<) at {merged}: write the fields out"
            )
        return Item(config_node)
    if not yn.is_null(config_node):
        raise ResourceListError("ResourceList.functionConfig must be a mapping")
    return None


def _read_by_items(text: str, shape: layout.Layout) -> ResourceList:
    root, api_version = _check_root(yn.compose(shape.root_text()))
    if len(shape.chunks) > MAX_ITEMS:
        raise ResourceListError(f"ResourceList has {len(shape.chunks)} items; the limit is {MAX_ITEMS}")
    items: list[Item] = []
    results: list[Result] = []
    for i, chunk in enumerate(shape.chunks):
        hint = _lazy_hint(chunk.text, shape.dash)
        item = Item(source=chunk.text, line=chunk.line, dash=shape.dash, index=i, hint=hint)
        items.append(item)
        if hint is not None:
            continue  # a TrainJob: composed, checked and settled one at a time when processed
        problem = flag(item, i, item.node, chunk.line)
        if problem is not None:
            results.append(problem)
        keep = item.problem is None and (item.group in _KEPT_GROUPS or item.kind in _KEPT_CORE_KINDS)
        if not keep:
            item.settle()  # read again when needed; until then only its text is held
    try:
        function_config = _function_config(root, yn.get(root, "items"))
    except ResourceListError:
        _check_unread(items)  # a TrainJob that does not parse is what the whole document reports first
        raise
    return ResourceList(items, function_config, api_version, results, layout=shape)


def _check_unread(items: list[Item]) -> None:
    """NotSplittable if an item never composed (a TrainJob read lazily) does not parse on its own."""
    for item in items:
        if not item.checked and item.source is not None and not yn.well_formed(document_of(item.source, item.dash)):
            raise NotSplittable


def _read_whole(text: str) -> ResourceList:
    root, api_version = _check_root(yn.compose(text))
    items_node = yn.get(root, "items")
    items: list[Item] = []
    results: list[Result] = []
    if isinstance(items_node, SequenceNode):
        if len(items_node.value) > MAX_ITEMS:
            raise ResourceListError(f"ResourceList has {len(items_node.value)} items; the limit is {MAX_ITEMS}")
        anchors = "&" in text
        for i, node in enumerate(items_node.value):
            item = Item(node, index=i)
            items.append(item)
            problem = flag(item, i, node, 0)
            if problem is not None:
                results.append(problem)
            if anchors:
                # An alias may share a node between items; editing one item must not change another.
                item.node = yn.deep_copy(node)
    elif not yn.is_null(items_node):
        raise ResourceListError("ResourceList.items must be a list")
    function_config = _function_config(root, items_node)
    return ResourceList(items, function_config, api_version, results, json_format=text.lstrip().startswith("{"))


_HINT_VALUE = re.compile(r"[ ]*([^\s#'\"]+)[ ]*(?:[ ]#.*)?")  # a plain value; a comment needs a space before


def _lazy_hint(text: str, dash: int) -> tuple[str, str] | None:
    """(apiVersion, kind) of a TrainJob, read off its text: such items are read later, one at a time.
    The item's top-level ``apiVersion:`` and ``kind:`` lines (on its ``-`` line or at its keys'
    column), each once and plain, are found with ``str.find``: most lines are deeper."""
    pad = " " * dash
    found: list[tuple[str, str]] = []
    for key in ("apiVersion", "kind"):
        starts = [len(first) for first in (f"{pad}- {key}:", f"{pad}  {key}:") if text.startswith(first)]
        for needle in (f"\n{pad}- {key}:", f"\n{pad}  {key}:"):
            at = text.find(needle)
            while at >= 0:
                starts.append(at + len(needle))
                at = text.find(needle, at + 1)
        for start in starts:
            end = text.find("\n", start)
            value = _HINT_VALUE.fullmatch(text, start, len(text) if end < 0 else end)
            if value is not None:
                found.append((key, value.group(1)))
    fields = dict(found)
    if len(found) != 2 or fields.get("kind") != "TrainJob":
        return None
    if not fields.get("apiVersion", "").startswith("trainer.kubeflow.org/"):
        return None
    return fields["apiVersion"], "TrainJob"


def write(resource_list: ResourceList) -> bytes:
    """The output ResourceList: items, functionConfig and results, as YAML (or JSON for JSON input).
    Items read from text that were not changed go out as they came in, comments and all."""
    shown = results_io.shown_results(resource_list.results) if resource_list.results else []
    shape = resource_list.layout
    if shape is not None:
        _check_unread(resource_list.items)  # a TrainJob not processed goes out as its text
        entries = []
        for item in resource_list.items:
            if item.source is None:
                entries.append(layout.entry(item.serialized(), shape.dash))
            else:
                entries.append(item.text())
        results = results_io.results_text(shown) if shown else None
        return shape.assemble(entries, results).encode()
    root = MappingNode(yn.MAP_TAG, [], flow_style=False)
    yn.set_key(root, "apiVersion", yn.str_node(resource_list.api_version))
    yn.set_key(root, "kind", yn.str_node("ResourceList"))
    yn.set_key(root, "items", SequenceNode(yn.SEQ_TAG, [i.node for i in resource_list.items], flow_style=False))
    if resource_list.function_config is not None:
        yn.set_key(root, "functionConfig", resource_list.function_config.node)
    if shown:
        yn.set_key(root, "results", results_io.results_node(shown))
    if resource_list.json_format:
        value = yn.to_python(root)
        try:
            text = json.dumps(value, ensure_ascii=False, indent=2, allow_nan=False)
        except ValueError:
            text = json.dumps(_finite(value), ensure_ascii=False, indent=2, allow_nan=False)
        return (text + "\n").encode()
    return yn.serialize(root).encode()


def _finite(value: Any) -> Any:
    """``value`` with infinities and NaN (``.inf``, ``1.0e+400``), which JSON cannot hold, as YAML's spelling."""
    if isinstance(value, float) and not math.isfinite(value):
        return ".nan" if math.isnan(value) else ".inf" if value > 0 else "-.inf"
    if isinstance(value, dict):
        return {_finite(k) if isinstance(k, float) else k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return value
