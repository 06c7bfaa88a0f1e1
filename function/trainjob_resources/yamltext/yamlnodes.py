"""PyYAML node trees: the bounded reader (``compose``), accessors and edits; the names of the reader's
parts are here too, so that one import serves: what text means (``yamltags``), what the reader refuses
(``yamlrefusals``) and the writer (``yamlwriter``).

Items are kept as composed nodes, not as Python values, so that what the function passes on is
what the user wrote: scalar styles (``"true"``, ``'64Gi'``, block text) survive, and only the
fields the function edits change. Reading is bounded (size, nesting depth, alias expansion) and
rejects duplicate mapping keys, as kustomize's kyaml does.
"""

from __future__ import annotations

import re
from collections.abc import Hashable, Iterator
from typing import Any

import yaml
from yaml.nodes import MappingNode as MappingNode
from yaml.nodes import Node as Node
from yaml.nodes import ScalarNode as ScalarNode
from yaml.nodes import SequenceNode as SequenceNode

from .yamlrefusals import (
    _MAY_DIRECTIVE,
    _MAY_FOLD,
    _MAY_TAG,
    _block_depth_bound,
    _check_expansion,
    _check_tags,
    _exact_bounds,
    _flow_depth_bound,
    _node_bound,
    _refuse_changing_folds,
    _refuse_colliding_keys,
    _refuse_disputed,
)
from .yamlrefusals import MAX_DEPTH as MAX_DEPTH
from .yamlrefusals import MAX_EXPANDED_NODES as MAX_EXPANDED_NODES
from .yamlrefusals import MAX_INPUT_BYTES as MAX_INPUT_BYTES
from .yamlrefusals import MAX_NODES as MAX_NODES
from .yamlrefusals import DuplicateKeyError as DuplicateKeyError
from .yamlrefusals import RefusedYamlError as RefusedYamlError
from .yamlrefusals import YamlInputError as YamlInputError
from .yamlrefusals import check_duplicate_keys as check_duplicate_keys
from .yamlrefusals import merge_key_path as merge_key_path
from .yamltags import MAP_TAG as MAP_TAG
from .yamltags import MERGE_TAG as MERGE_TAG
from .yamltags import NULL_TAG as NULL_TAG
from .yamltags import SEQ_TAG as SEQ_TAG
from .yamltags import STR_TAG as STR_TAG
from .yamltags import _Composer, _Constructor, _plain_tag, _scalar_value
from .yamltags import scalar_value as scalar_value
from .yamlwriter import OutputLimitError as OutputLimitError
from .yamlwriter import serialize as serialize
from .yamlwriter import written_size as written_size


def decode(data: bytes) -> str:
    """UTF-8 text of the input (a BOM is dropped), or a YamlInputError."""
    if len(data) > MAX_INPUT_BYTES:
        raise YamlInputError(f"input is larger than {MAX_INPUT_BYTES} bytes, the limit")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise YamlInputError(f"input is not valid UTF-8: byte offset {err.start}: {err.reason}") from None
    return text.removeprefix("\ufeff")


def well_formed(text: str) -> bool:
    """Whether ``text`` parses as YAML, checked by libyaml alone: no node or event objects are made."""
    try:
        yaml.CSafeLoader(text).raw_parse()
    except yaml.YAMLError:
        return False
    return True


def compose(text: str) -> Node | None:
    """The single document of ``text`` as a node tree, within the depth, node and alias bounds."""
    try:
        encoded = text.encode()
        flow_depth = _flow_depth_bound(encoded)
        # No byte is more than one indicator: a text this short is under the node bound unread.
        many = 4 * len(encoded) + 1 > MAX_NODES and _node_bound(encoded) > MAX_NODES
        if many or _block_depth_bound(text, MAX_DEPTH - flow_depth):
            _exact_bounds(text)
        del encoded
        if ("!" in text and _MAY_TAG.search(text)) or ("%" in text and _MAY_DIRECTIVE.search(text)):
            _check_tags(text)
        loader = _Composer(text)
        try:
            node = loader.get_single_node()
        finally:
            loader.dispose()
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        problem = err.problem or err.context or "invalid YAML"
        if mark is not None:
            raise YamlInputError(f"invalid YAML: {problem}", mark.line + 1, mark.column + 1) from None
        raise YamlInputError(f"invalid YAML: {problem}") from None
    except yaml.YAMLError as err:
        raise YamlInputError(f"invalid YAML: {err}") from None
    if node is not None and loader.disputes:
        _refuse_disputed(node, set(loader.disputes))
    if node is not None and ">" in text and _MAY_FOLD.search(text):
        _refuse_changing_folds(node)
    if node is not None and loader.typed_keys:
        _refuse_colliding_keys(node)
    if node is not None and "&" in text:
        _check_expansion(node)
    return node


# A tag starts with ``!`` after a space, a line start or a flow indicator; a directive is a line
# starting with ``%``. Most texts have neither, and are not parsed twice.


def to_python(node: Node) -> Any:
    """The plain Python value of a node, never failing and never changing the node.

    Merge keys are applied; timestamps stay strings; a scalar that its tag cannot construct (an
    integer of more digits than Python converts, ``!!int abc``), and any tag beyond YAML's plain
    ones (``!!binary``, ``!!python/...``, ``!custom``), give the scalar's text; other tagged
    mappings and sequences give a dict and a list; a key that is not a scalar gives its YAML text.
    """
    return _value(node, _Constructor(), {})


def _value(node: Node, constructor: _Constructor, memo: dict[int, Any]) -> Any:
    # Built here rather than by SafeConstructor: it is slow, raises on scalars it cannot construct,
    # and applies merge keys by rewriting the node in place.
    if isinstance(node, ScalarNode):
        return _scalar_value(node, constructor)
    known = memo.get(id(node))
    if known is not None:
        return known
    if isinstance(node, MappingNode):
        mapping: dict[Any, Any] = {}
        memo[id(node)] = mapping
        # Most mappings have plain string keys only: their values go straight in. At any other key
        # (a merge key among them) the mapping is built again below, merges first.
        for key, value in node.value:
            if key.__class__ is not ScalarNode or key.tag != STR_TAG:
                mapping.clear()
                break
            if key.value not in mapping:  # a repeated key (an error of its own) reads as ``get`` reads it: the first
                mapping[key.value] = (
                    value.value
                    if value.__class__ is ScalarNode and value.tag == STR_TAG
                    else _value(value, constructor, memo)
                )
        else:
            return mapping
        own: dict[Any, Any] = {}
        for key, value in node.value:
            # Most keys and values are plain strings: read those without a call.
            if key.__class__ is ScalarNode and key.tag == STR_TAG:
                name = key.value
            else:
                if isinstance(key, ScalarNode) and key.tag == MERGE_TAG:
                    merged = _merged(value, constructor, memo)
                    if merged is not None:
                        mapping.update(merged)
                        continue
                name = _key(key, constructor, memo)
            if name not in own:  # a repeated key (an error of its own) reads as ``get`` reads it: the first
                own[name] = (
                    value.value
                    if value.__class__ is ScalarNode and value.tag == STR_TAG
                    else _value(value, constructor, memo)
                )
        mapping.update(own)
        return mapping
    sequence: list[Any] = []
    memo[id(node)] = sequence
    sequence.extend(
        v.value if v.__class__ is ScalarNode and v.tag == STR_TAG else _value(v, constructor, memo) for v in node.value
    )
    return sequence


def _merged(node: Node, constructor: _Constructor, memo: dict[int, Any]) -> dict[Any, Any] | None:
    """What a merge key's value contributes (earlier mappings of a list win), or None if it is no merge."""
    sources = [node] if isinstance(node, MappingNode) else node.value if isinstance(node, SequenceNode) else None
    if not sources or not all(isinstance(s, MappingNode) for s in sources):
        return None
    out: dict[Any, Any] = {}
    for source in sources:  # in PyYAML's order: the first mapping's keys, then what each next one adds
        for key, value in _value(source, constructor, memo).items():
            if key not in out:
                out[key] = value
    return out


def _key(node: Node, constructor: _Constructor, memo: dict[int, Any]) -> Any:
    if isinstance(node, ScalarNode):
        return _value(node, constructor, memo)
    return serialize(deep_copy(node)).strip()


_representer = yaml.representer.SafeRepresenter(default_flow_style=False, sort_keys=False)


def from_python(value: Any) -> Node:
    """A fresh node tree for a plain Python value, in block style; strings that would read as
    another type unquoted get double quotes (``cpu: "2"``), as kyaml writes them."""
    _representer.represented_objects = {}
    node: Node = _representer.represent_data(value)
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, ScalarNode):
            if current.tag == STR_TAG and needs_quotes(current.value):
                current.style = '"'
        else:
            stack.extend(n for pair_or_node in current.value for n in _flatten(pair_or_node))
    return node


def text_node(value: str) -> ScalarNode:
    """A string scalar, double-quoted only where plain text would read as another type (as
    ``from_python`` writes it)."""
    return ScalarNode(STR_TAG, value, style='"' if needs_quotes(value) else None)


# go-yaml v2's resolver (resolve.go), which kubectl, Argo CD and sigs.k8s.io/yaml read with: YAML
# 1.1 booleans and nulls, integers as Go's strconv.ParseInt(s, 0, 64) reads them once ``_`` are
# taken out (0x, 0o, 0b, leading 0), and its yamlStyleFloat. PyYAML's resolver (1.1 too) reads
# ``y``, ``n``, ``1e3``, ``0o17`` and ``1_0`` as strings; written plain, the cluster would not.
_YAML11_WORDS = frozenset(
    (
        "y", "Y", "yes", "Yes", "YES", "n", "N", "no", "No", "NO", "true", "True", "TRUE", "false", "False",
        "FALSE", "on", "On", "ON", "off", "Off", "OFF", "~", "null", "Null", "NULL", ".inf", ".Inf", ".INF",
        "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf", "-.INF", ".nan", ".NaN", ".NAN", "<<",
    )
)  # fmt: skip
_YAML11_NUMBER = re.compile(
    r"[-+]?(?:0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+|[0-9]+)"
    r"|[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
)


def yaml11_non_string(value: str) -> bool:
    """Whether go-yaml v2 reads ``value``, written plain, as something other than a string."""
    if value == "" or value in _YAML11_WORDS:
        return True
    if value[0] not in "0123456789+-.":
        return False
    return _YAML11_NUMBER.fullmatch(value.replace("_", "")) is not None


def only_yaml11_non_string(value: str) -> bool:
    """A string PyYAML writes plain (its resolver reads it back as a string) that go-yaml v2 does
    not: it must be quoted by hand; the others the writer quotes itself."""
    return yaml11_non_string(value) and _plain_tag(value) == STR_TAG


def needs_quotes(value: str) -> bool:
    """Whether a string must be quoted to read back as a string, in PyYAML and in go-yaml v2."""
    return _plain_tag(value) != STR_TAG or yaml11_non_string(value)


def _flatten(entry: Any) -> tuple[Node, ...]:
    return entry if isinstance(entry, tuple) else (entry,)


# Accessors and edits on mapping nodes. Keys are plain scalars in Kubernetes objects.


def get(node: Node | None, key: str) -> Node | None:
    if not isinstance(node, MappingNode):
        return None
    for k, v in node.value:
        if k.value == key and isinstance(k, ScalarNode):  # a collection's value is a list: never equal
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
        if k.value == key and isinstance(k, ScalarNode):
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
    return ScalarNode(STR_TAG, value, style='"' if only_yaml11_non_string(value) else None)


def items_of(node: Node | None) -> Iterator[tuple[str, Node]]:
    if isinstance(node, MappingNode):
        for k, v in node.value:
            if isinstance(k, ScalarNode):
                yield str(k.value), v


def deep_copy(node: Node, keep_marks: bool = False) -> Node:
    """A copy that shares nothing with ``node`` (aliases become separate subtrees); with
    ``keep_marks``, each copied node keeps where its original was read."""
    return _copy(node, {}, keep_marks)


def _copy(node: Node, memo: dict[int, Node], keep_marks: bool) -> Node:
    # A module function, not a closure: a closure that calls itself is a reference cycle, and with
    # gc off (as the CLI runs) it would keep every copied node alive.
    known = memo.get(id(node))
    if known is not None:
        return known
    start, end = (node.start_mark, node.end_mark) if keep_marks else (None, None)
    out: Node
    if isinstance(node, ScalarNode):
        out = ScalarNode(node.tag, node.value, start, end, style=node.style)
    elif isinstance(node, MappingNode):
        pairs = [(_copy(k, memo, keep_marks), _copy(v, memo, keep_marks)) for k, v in node.value]
        out = MappingNode(node.tag, pairs, start, end, flow_style=node.flow_style)
    else:
        assert isinstance(node, SequenceNode)
        entries = [_copy(v, memo, keep_marks) for v in node.value]
        out = SequenceNode(node.tag, entries, start, end, flow_style=node.flow_style)
    memo[id(node)] = out
    return out


def signature(node: Node) -> Hashable | None:
    """What ``serialize`` writes of ``node`` depends on, as a hashable value: each node's class,
    tag, value or children, and style; None where a node is met twice (the writer anchors it)."""
    return _signature(node, set())


def _signature(node: Node, seen: set[int]) -> Hashable | None:
    if id(node) in seen:
        return None
    seen.add(id(node))
    if node.__class__ is ScalarNode:
        return (node.tag, node.value, node.style)
    if node.__class__ is MappingNode:
        children = [child for pair in node.value for child in pair]
    elif node.__class__ is SequenceNode:
        children = list(node.value)
    else:
        return None
    parts: list[Hashable] = [node.__class__ is MappingNode, node.tag, node.flow_style]
    for child in children:
        part = _signature(child, seen)
        if part is None:
            return None
        parts.append(part)
    return tuple(parts)
