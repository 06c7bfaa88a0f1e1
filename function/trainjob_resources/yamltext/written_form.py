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
import unicodedata
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
            node.value.sort(key=lambda pair: _ORDER(yn.scalar(pair[0]) or ""))
            if not deep:
                return
            stack.extend(value for _, value in node.value)
        elif isinstance(node, SequenceNode):
            stack.extend(node.value)
