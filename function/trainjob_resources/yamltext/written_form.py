"""An object as kustomize's build writes it, whatever text it was read from.

kustomize writes every resource through JSON (api/resource/resource.go ``AsYAML``: ``MarshalJSON``,
then sigs.k8s.io/yaml's ``JSONToYAML``, whose go-yaml v2 ``Marshal`` sorts each mapping's keys with
``keyList.Less`` in sorter.go). ``copy`` gives a fresh tree of the same value in that form:
merge keys applied, aliases expanded, every mapping's keys in go-yaml v2's order, strings quoted
only where a plain one would read as another type, multi-line strings as literal blocks. Two texts
of one object give the same tree, so the same serialized text.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Hashable
from typing import Any

from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from . import yamlnodes as yn

_INT64 = 1 << 64


def _is_letter(char: str) -> bool:
    return unicodedata.category(char).startswith("L")  # Go's unicode.IsLetter: category L


def _is_digit(char: str) -> bool:
    return unicodedata.category(char) == "Nd"  # Go's unicode.IsDigit


def _wrapped(value: int) -> int:
    """``value`` as Go's int64 holds it after overflow."""
    value %= _INT64
    return value - _INT64 if value >= 1 << 63 else value


def key_less(a: str, b: str) -> bool:
    """Whether go-yaml v2 writes string key ``a`` before ``b`` (go.yaml.in/yaml/v2 sorter.go,
    ``keyList.Less``): runes compared in turn; at the first difference two letters compare by code
    point, a non-letter goes before a letter, and two non-letters compare as the runs of digits
    that start there, by value, then by length, then by rune. A prefix goes first."""
    for i in range(min(len(a), len(b))):
        x, y = a[i], b[i]
        if x == y:
            continue
        x_letter, y_letter = _is_letter(x), _is_letter(y)
        if x_letter and y_letter:
            return x < y
        if x_letter or y_letter:
            return y_letter
        x_number = y_number = 0
        if x == "0" or y == "0":
            j = i - 1
            while j >= 0 and _is_digit(a[j]):
                if a[j] != "0":
                    x_number = y_number = 1
                    break
                j -= 1
        x_end = i
        while x_end < len(a) and _is_digit(a[x_end]):
            x_number = _wrapped(x_number * 10 + ord(a[x_end]) - ord("0"))
            x_end += 1
        y_end = i
        while y_end < len(b) and _is_digit(b[y_end]):
            y_number = _wrapped(y_number * 10 + ord(b[y_end]) - ord("0"))
            y_end += 1
        if x_number != y_number:
            return x_number < y_number
        if x_end != y_end:
            return x_end < y_end
        return x < y
    return len(a) < len(b)


def _compare(a: str, b: str) -> int:
    return -1 if key_less(a, b) else 1 if key_less(b, a) else 0


_ORDER = functools.cmp_to_key(_compare)


def _sorted_value(value: Any) -> Any:
    if type(value) is dict:
        # Through JSON every key is a string (kyaml's MarshalJSON writes a scalar key's text).
        pairs = {k if type(k) is str else yn.serialize(yn.from_python(k)).strip(): v for k, v in value.items()}
        return {k: _sorted_value(pairs[k]) for k in sorted(pairs, key=_ORDER)}
    if type(value) is list:
        return [_sorted_value(entry) for entry in value]
    return value


def _literal_blocks(root: Node) -> None:
    stack = [root]
    while stack:
        node = stack.pop()
        if isinstance(node, ScalarNode):
            if node.tag == yn.STR_TAG and "\n" in node.value:
                node.style = "|"  # the writer falls back to double quotes where a literal block cannot hold it
        elif isinstance(node, MappingNode):
            stack.extend(n for pair in node.value for n in pair)
        else:
            assert isinstance(node, SequenceNode)
            stack.extend(node.value)


def copy(node: Node) -> Node:
    """A fresh tree of ``node``'s value in the form kustomize's build writes (see the module)."""
    fresh = yn.from_python(_sorted_value(yn.to_python(node)))
    _literal_blocks(fresh)
    return fresh


def sort_keys(root: Node, deep: bool = True) -> None:
    """Puts the keys of every mapping under ``root`` (a tree ``copy`` made, then edited) back
    in go-yaml v2's order, in place; without ``deep``, only ``root``'s own keys."""
    stack = [root]
    while stack:
        node = stack.pop()
        if isinstance(node, MappingNode):
            keys = [yn.scalar(key) or "" for key, _ in node.value]
            order = sorted(range(len(keys)), key=lambda i: _ORDER(keys[i]))
            node.value[:] = [node.value[i] for i in order]
            if not deep:
                return
            stack.extend(value for _, value in node.value)
        elif isinstance(node, SequenceNode):
            stack.extend(node.value)


_KEEP = re.compile(r"[|>][1-9]?\+\n")
# A slot: a mapping of the tree and one of its keys, whose entry each copy writes for itself.
Slot = tuple[MappingNode, str]


class Template:
    """The text ``yamlnodes.serialize`` writes for copies of one tree that differ from it only in
    some mapping entries (the slots), without serializing the rest again: the tree is serialized
    once with a marker in each slot, and each copy's text is that text with the marker lines
    replaced by its own entries, each serialized alone at the slot's column. A block entry's
    text depends only on the entry and its column, so the result is the copy's serialization;
    where the layout is not the one this needs (a marker not alone on its line, a key order that
    depends on the slot's presence), ``fill`` returns None and the caller serializes."""

    __slots__ = ("_columns", "_entries", "_keys", "_order", "_segments")

    def __init__(self, root: MappingNode, slots: list[Slot]) -> None:
        self._segments: list[str] | None = None
        # Each entry's text by its place in the text and its value's signature: copies repeat the
        # resources of most containers (shared with the tree, or resized to the same few sizes).
        self._entries: dict[tuple[int, Hashable], str | None] = {}
        self._columns: list[int] = []  # each marker line's column, in text order
        self._order: list[int] = []  # the slots in text order
        self._keys: list[list[str]] = []  # each slot mapping's keys, its own key included, as written
        saved = [(mapping, list(mapping.value)) for mapping, _ in slots]
        try:
            self._prepare(root, slots)
        finally:
            for mapping, value in reversed(saved):
                mapping.value[:] = value

    def _prepare(self, root: MappingNode, slots: list[Slot]) -> None:
        markers = [f"trainjob-resources-slot-{i}" for i in range(len(slots))]
        for (mapping, key), marker in zip(slots, markers, strict=True):
            others = [yn.scalar(k) for k, _ in mapping.value if yn.scalar(k) != key]
            yn.set_key(mapping, key, yn.str_node(marker))
            sort_keys(mapping, deep=False)
            keys = [yn.scalar(k) or "" for k, _ in mapping.value]
            if [k for k in keys if k != key] != others or not all(isinstance(k, ScalarNode) for k, _ in mapping.value):
                return  # its order depends on whether the slot's key is there
            self._keys.append(keys)
        text = yn.serialize(root)
        if _KEEP.search(text):
            return  # a block scalar keeping its empty lines: the writer ends the document after it if it is last
        found: list[tuple[int, int, int, int]] = []  # (line start, line end, column, slot)
        for i, ((_, key), marker) in enumerate(zip(slots, markers, strict=True)):
            at = text.find(marker)
            if at < 0 or text.find(marker, at + 1) >= 0:
                return
            start = text.rfind("\n", 0, at) + 1
            end = text.find("\n", at)
            column = at - start - len(key) - 2
            if end < 0 or column < 0 or text[start:end] != " " * column + f"{key}: {marker}":
                return
            found.append((start, end + 1, column, i))
        found.sort()
        segments, at = [], 0
        for start, end, column, slot in found:
            segments.append(text[at:start])
            self._columns.append(column)
            self._order.append(slot)
            at = end
        segments.append(text[at:])
        self._segments = segments

    def fill(self, slots: list[Slot]) -> str | None:
        """The serialization of a copy whose slot mappings (in the order given to the constructor)
        are ``slots``: each holds its key or not, the rest of the copy as the tree. None where
        the copy's keys are not in the order the template was written in."""
        segments = self._segments
        if segments is None:
            return None
        parts = [segments[0]]
        for at, i in enumerate(self._order):
            mapping, key = slots[i]
            expected = self._keys[i]
            keys = [yn.scalar(k) for k, _ in mapping.value]
            value = yn.get(mapping, key)
            if not keys or keys != (expected if value is not None else [k for k in expected if k != key]):
                return None  # an empty mapping is written {} on its parent's line
            if value is not None:
                entry = self._entry_at(at, key, value)
                if entry is None:
                    return None
                parts.append(entry)
            parts.append(segments[at + 1])
        return "".join(parts)

    def _entry_at(self, at: int, key: str, value: Node) -> str | None:
        """``_entry`` at the ``at``-th slot in text order, once per value's signature."""
        signature = yn.signature(value)
        if signature is None:
            return _entry(key, value, self._columns[at])
        cached = (at, signature)
        if cached not in self._entries:
            self._entries[cached] = _entry(key, value, self._columns[at])
        return self._entries[cached]


def _entry(key: str, value: Node, column: int) -> str | None:
    """``key: value`` as a block mapping's entry at ``column`` (each line indented, empty lines kept
    empty); None where it ends with a value the writer ends the document after (``...``: a block
    scalar that keeps its trailing empty lines), which depends on what follows it."""
    text = yn.serialize(MappingNode(yn.MAP_TAG, [(yn.str_node(key), value)], flow_style=False))
    if text.endswith("\n...\n"):
        return None
    if not column:
        return text
    pad = " " * column
    return "".join(pad + line if line != "\n" else line for line in text.splitlines(keepends=True))
