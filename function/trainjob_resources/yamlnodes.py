"""PyYAML node trees: the bounded reader, accessors and edits, and the writer.

Items are kept as composed nodes, not as Python values, so that what the function passes on is
what the user wrote: scalar styles (``"true"``, ``'64Gi'``, block text) survive, and only the
fields the function edits change. Reading is bounded (size, nesting depth, alias expansion) and
rejects duplicate mapping keys, as kustomize's kyaml does.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

STR_TAG = "tag:yaml.org,2002:str"
MAP_TAG = "tag:yaml.org,2002:map"
SEQ_TAG = "tag:yaml.org,2002:seq"
NULL_TAG = "tag:yaml.org,2002:null"
_TIMESTAMP_TAG = "tag:yaml.org,2002:timestamp"
_MERGE_TAG = "tag:yaml.org,2002:merge"

MAX_INPUT_BYTES = 256 * 1024 * 1024
MAX_DEPTH = 200
MAX_EXPANDED_NODES = 10_000_000


class YamlInputError(ValueError):
    """Input that cannot be read as YAML within the documented bounds."""

    def __init__(self, message: str, line: int | None = None, column: int | None = None) -> None:
        where = f" (line {line}, column {column})" if line is not None else ""
        super().__init__(message + where)
        self.line = line
        self.column = column


class DuplicateKeyError(ValueError):
    """A mapping that names one key twice; ``path`` is relative to the node checked."""

    def __init__(self, key: str, path: str, line: int) -> None:
        super().__init__(f"duplicate mapping key {key!r} (line {line})")
        self.key = key
        self.path = path
        self.line = line


class _Constructor(yaml.constructor.SafeConstructor):
    """Builds plain values; timestamps stay strings, as in JSON and the Kubernetes API."""


_Constructor.add_constructor(_TIMESTAMP_TAG, _Constructor.construct_yaml_str)  # type: ignore[type-var]


_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")


def _flow_depth_bound(text: str) -> int:
    """Deepest bracket nesting, counting brackets inside strings too (so an upper bound)."""
    brackets = text.encode().translate(None, _NOT_BRACKETS).replace(b"{", b"[").replace(b"}", b"]")
    depth = 0
    while brackets and depth <= MAX_DEPTH:
        innermost_removed = brackets.replace(b"[]", b"")
        if len(innermost_removed) == len(brackets):
            return MAX_DEPTH + 1  # unbalanced (brackets in strings): no bound from this
        brackets = innermost_removed
        depth += 1
    return depth


def _block_depth_bound(text: str) -> int:
    indents = re.findall(r"^[ \t\-?:]*", text, re.MULTILINE)
    return max((len(i) for i in indents), default=0)


def _exact_depth(text: str) -> tuple[int, int, int]:
    depth = deepest = 0
    line = column = 0
    for event in yaml.parse(text, Loader=yaml.CSafeLoader):
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > deepest:
                deepest = depth
                mark = event.start_mark
                line, column = (mark.line + 1, mark.column + 1) if mark is not None else (0, 0)
                if deepest > MAX_DEPTH:
                    break
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1
    return deepest, line, column


def decode(data: bytes) -> str:
    """UTF-8 text of the input (a BOM is dropped), or a YamlInputError."""
    if len(data) > MAX_INPUT_BYTES:
        raise YamlInputError(f"input is {len(data)} bytes; the limit is {MAX_INPUT_BYTES} bytes")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise YamlInputError(f"input is not valid UTF-8: byte offset {err.start}: {err.reason}") from None
    return text.removeprefix("\ufeff")


def compose(text: str) -> Node | None:
    """The single document of ``text`` as a node tree, within the depth and alias bounds."""
    try:
        if _flow_depth_bound(text) + _block_depth_bound(text) + 1 > MAX_DEPTH:
            deepest, line, column = _exact_depth(text)
            if deepest > MAX_DEPTH:
                raise YamlInputError(f"nesting deeper than {MAX_DEPTH} levels", line, column)
        node = yaml.compose(text, Loader=yaml.CSafeLoader)
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        problem = err.problem or err.context or "invalid YAML"
        if mark is not None:
            raise YamlInputError(f"invalid YAML: {problem}", mark.line + 1, mark.column + 1) from None
        raise YamlInputError(f"invalid YAML: {problem}") from None
    except yaml.YAMLError as err:
        raise YamlInputError(f"invalid YAML: {err}") from None
    if node is not None and "&" in text:
        _check_expansion(node)
    return node


def _check_expansion(root: Node) -> None:
    """Reject alias bombs: the tree, aliases expanded, must stay under MAX_EXPANDED_NODES."""
    sizes: dict[int, int] = {}
    stack: list[tuple[Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        if id(node) in sizes:
            continue
        if isinstance(node, ScalarNode):
            sizes[id(node)] = 1
            continue
        children = _children(node)
        if not children_done:
            stack.append((node, True))
            stack.extend((c, False) for c in children if id(c) not in sizes)
            continue
        total = 1 + sum(sizes[id(c)] for c in children)
        if total > MAX_EXPANDED_NODES:
            mark = node.start_mark
            raise YamlInputError(
                f"aliases expand to more than {MAX_EXPANDED_NODES} nodes", mark.line + 1, mark.column + 1
            )
        sizes[id(node)] = total


def _children(node: Node) -> list[Node]:
    if isinstance(node, MappingNode):
        return [n for pair in node.value for n in pair]
    if isinstance(node, SequenceNode):
        return list(node.value)
    return []


def check_duplicate_keys(root: Node) -> None:
    """Raise DuplicateKeyError for the first mapping below ``root`` that repeats a key."""
    seen: set[int] = set()
    stack: list[tuple[Node, str]] = [(root, "")]
    while stack:
        node, path = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, MappingNode):
            keys: set[tuple[str, str]] = set()
            if len({k.value for k, _ in node.value if isinstance(k, ScalarNode)}) == len(node.value):
                stack.extend(
                    (v, _join(path, k.value)) for k, v in node.value if isinstance(v, MappingNode | SequenceNode)
                )
                continue
            for key, value in node.value:
                if isinstance(key, ScalarNode):
                    if key.tag == _MERGE_TAG:
                        continue
                    ident = (key.tag, key.value)
                    if ident in keys:
                        raise DuplicateKeyError(key.value, _join(path, key.value), key.start_mark.line + 1)
                    keys.add(ident)
                    stack.append((value, _join(path, key.value)))
                else:
                    stack.append((value, path))
        elif isinstance(node, SequenceNode):
            stack.extend((v, f"{path}[{i}]") for i, v in enumerate(node.value))


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def to_python(node: Node) -> Any:
    """The plain Python value of a node (merge keys applied, timestamps as strings)."""
    constructor = _Constructor()
    try:
        return _fast_value(node, constructor, {})
    except _NeedsFullConstructor:
        return constructor.construct_document(node)


class _NeedsFullConstructor(Exception):
    """A node the fast path does not handle (merge keys, unusual tags)."""


_SCALAR_TAGS = {
    "tag:yaml.org,2002:int": "construct_yaml_int",
    "tag:yaml.org,2002:float": "construct_yaml_float",
    "tag:yaml.org,2002:bool": "construct_yaml_bool",
    _TIMESTAMP_TAG: "construct_yaml_str",
}


def _fast_value(node: Node, constructor: _Constructor, memo: dict[int, Any]) -> Any:
    # SafeConstructor is generic and slow; Kubernetes objects use a handful of tags, built here
    # directly, and anything else goes to SafeConstructor so the result is the same.
    if isinstance(node, ScalarNode):
        if node.tag == STR_TAG:
            return node.value
        if node.tag == NULL_TAG:
            return None
        method = _SCALAR_TAGS.get(node.tag)
        if method is None:
            raise _NeedsFullConstructor
        return getattr(constructor, method)(node)
    known = memo.get(id(node))
    if known is not None:
        return known
    if isinstance(node, MappingNode):
        if node.tag != MAP_TAG:
            raise _NeedsFullConstructor
        mapping: dict[Any, Any] = {}
        memo[id(node)] = mapping
        for key, value in node.value:
            if not isinstance(key, ScalarNode) or key.tag == _MERGE_TAG:
                raise _NeedsFullConstructor
            mapping[_fast_value(key, constructor, memo)] = _fast_value(value, constructor, memo)
        return mapping
    if node.tag != SEQ_TAG:
        raise _NeedsFullConstructor
    sequence: list[Any] = []
    memo[id(node)] = sequence
    sequence.extend(_fast_value(v, constructor, memo) for v in node.value)
    return sequence


_representer = yaml.representer.SafeRepresenter(default_flow_style=False, sort_keys=False)


def from_python(value: Any) -> Node:
    """A fresh node tree for a plain Python value, in block style."""
    _representer.represented_objects = {}
    node: Node = _representer.represent_data(value)
    return node


# Accessors and edits on mapping nodes. Keys are plain scalars in Kubernetes objects.


def get(node: Node | None, key: str) -> Node | None:
    if not isinstance(node, MappingNode):
        return None
    for k, v in node.value:
        if isinstance(k, ScalarNode) and k.value == key:
            found: Node = v
            return found
    return None


def get_path(node: Node | None, *keys: str) -> Node | None:
    for key in keys:
        node = get(node, key)
    return node


def scalar(node: Node | None) -> str | None:
    """The text of a scalar node that is not null; None otherwise."""
    if isinstance(node, ScalarNode) and node.tag != NULL_TAG:
        return str(node.value)
    return None


def is_null(node: Node | None) -> bool:
    return node is None or (isinstance(node, ScalarNode) and node.tag == NULL_TAG)


def set_key(node: MappingNode, key: str, value: Node) -> None:
    """Replace ``key``'s value in place, or append the key."""
    for i, (k, _) in enumerate(node.value):
        if isinstance(k, ScalarNode) and k.value == key:
            node.value[i] = (k, value)
            return
    node.value.append((ScalarNode(STR_TAG, key), value))


def delete_key(node: MappingNode, key: str) -> bool:
    before = len(node.value)
    node.value = [(k, v) for k, v in node.value if not (isinstance(k, ScalarNode) and k.value == key)]
    return len(node.value) != before


def ensure_map(node: MappingNode, key: str) -> MappingNode:
    """The mapping under ``key``, created (or replacing a null) when absent."""
    child = get(node, key)
    if isinstance(child, MappingNode):
        return child
    fresh = MappingNode(MAP_TAG, [], flow_style=False)
    set_key(node, key, fresh)
    return fresh


def str_node(value: str) -> ScalarNode:
    return ScalarNode(STR_TAG, value)


def items_of(node: Node | None) -> Iterator[tuple[str, Node]]:
    if isinstance(node, MappingNode):
        for k, v in node.value:
            if isinstance(k, ScalarNode):
                yield str(k.value), v


def deep_copy(node: Node) -> Node:
    """A copy that shares nothing with ``node`` (aliases become separate subtrees)."""
    memo: dict[int, Node] = {}

    def copy(n: Node) -> Node:
        if id(n) in memo:
            return memo[id(n)]
        out: Node
        if isinstance(n, ScalarNode):
            out = ScalarNode(n.tag, n.value, style=n.style)
        elif isinstance(n, MappingNode):
            out = MappingNode(n.tag, [(copy(k), copy(v)) for k, v in n.value], flow_style=n.flow_style)
        else:
            assert isinstance(n, SequenceNode)
            out = SequenceNode(n.tag, [copy(v) for v in n.value], flow_style=n.flow_style)
        memo[id(n)] = out
        return out

    return copy(node)


def serialize(node: Node) -> str:
    """Block YAML the way kyaml writes it: two-space indent, no line folding, unicode kept."""
    text: str = yaml.serialize(
        node,
        Dumper=yaml.CSafeDumper,
        allow_unicode=True,
        width=1 << 30,
        indent=2,
        explicit_start=False,
    )
    return text
