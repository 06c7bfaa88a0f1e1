"""The writer: a node tree as block YAML the way kyaml writes it, and its size as written, bounded."""

from __future__ import annotations

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from .yamltags import NULL_TAG, STR_TAG, _children, _Dumper, _plain_tag


class OutputLimitError(Exception):
    """``written_size`` stopped: the text, aliases expanded, passes ``limit`` bytes."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"more than {limit:,} bytes as written")
        self.limit = limit


class _ByteCount:
    """The emitter's stream for ``written_size``: counts the UTF-8 bytes it is given, and stops the
    emitter as soon as they pass ``limit``; keeps nothing."""

    __slots__ = ("limit", "size")

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.size = 0

    def write(self, text: str) -> None:
        self.size += len(text) if text.isascii() else len(text.encode())
        if self.size > self.limit:
            raise OutputLimitError(self.limit)


def serialize(node: Node) -> str:
    """Block YAML the way kyaml writes it: two-space indent, no line folding, unicode kept."""
    text = _serialize(node)
    if "! " in text and (_spell_flow_nulls(node) | _plain_typed_scalars(node)):
        text = _serialize(node)
    return text


def written_size(node: Node, limit: int) -> int:
    """The UTF-8 bytes of ``serialize(node)`` (every alias of a scalar written out in full, as the
    emitter writes it), counted as the emitter writes them: ``OutputLimitError`` as soon as they
    pass ``limit``, so that a tree whose aliases expand to gigabytes costs what the limit allows.
    Applies what ``serialize`` would apply before its second pass (they change a tree only where
    its text would hold ``! ``)."""
    _spell_flow_nulls(node)
    _plain_typed_scalars(node)
    counter = _ByteCount(limit)
    _serialize(node, counter)
    return counter.size


def _plain_typed_scalars(root: Node) -> bool:
    """Write plain a quoted scalar whose tag its plain text resolves to (``!!int "5"``, which the
    reader accepts): libyaml writes one as ``! '5'``, the non-specific tag, which reads as a string."""
    changed = False
    seen: set[int] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, ScalarNode):
            if node.style and node.tag != STR_TAG and _plain_tag(node.value) == node.tag:
                node.style = None
                changed = True
            continue
        stack.extend(_children(node))
    return changed


def _serialize(node: Node, stream: _ByteCount | None = None) -> str:
    text: str | None = yaml.serialize(
        node,
        stream,
        Dumper=_Dumper,
        allow_unicode=True,
        width=1 << 30,
        indent=2,
        explicit_start=False,
    )
    return text or ""


def _spell_flow_nulls(root: Node) -> bool:
    """Spell empty nulls inside flow collections ``null``: libyaml writes them ``! ''``, which YAML
    parsers other than PyYAML (kyaml's among them) read as an empty string."""
    changed = False
    seen: set[int] = set()
    stack: list[tuple[Node, bool]] = [(root, False)]
    while stack:
        node, in_flow = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, ScalarNode):
            if in_flow and node.tag == NULL_TAG and node.value == "":
                node.value = "null"
                changed = True
            continue
        in_flow = in_flow or (isinstance(node, MappingNode | SequenceNode) and bool(node.flow_style))
        stack.extend((child, in_flow) for child in _children(node))
    return changed
