"""textedit.remember_value against its definition: ``remember`` and ``yn.to_python`` on the same tree.

An item's tree is walked once after composing, for both what ``render`` needs (each collection's
children as read, every collection, whether a key may repeat) and the item's plain value. The one
walk must leave exactly what the two walks leave, on any document: plain ones (the walk is taken)
and ones with anchors, merge keys, tagged, repeated or non-string keys (the two walks are taken).
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from trainjob_resources.yamltext import textedit
from trainjob_resources.yamltext import yamlnodes as yn
from yaml.nodes import CollectionNode, MappingNode, Node, ScalarNode

PLAIN_KEYS = ["a", "b", "c", "d", "e", "'f'", '"g"', "!!str h"]
# No null key, plain y or n, local tag, or true beside 1 (one key to Python): compose refuses them.
KEYS = ["a", "b", "c", "'a'", '"b"', "1", "false", "'null'", "!!str c", "2001-12-14", "? [k]", "<<"]
SCALARS = ["x", "1", "1.5", "true", "null", "~", "'s'", '"t"', "2001-12-14", "0x1F", "-.inf", "''", "!!int 7"]
SCALARS += ["!!str z"]


@st.composite
def _flow(draw: st.DrawFn, depth: int, keys: list[str]) -> str:
    if depth <= 0 or draw(st.booleans()):
        return draw(st.sampled_from(SCALARS))
    if draw(st.booleans()):
        return "[" + ", ".join(draw(st.lists(_flow(depth - 1, keys), max_size=3))) + "]"
    chosen = draw(st.lists(st.sampled_from([k for k in keys if k not in ("? [k]", "<<")]), max_size=3))
    return "{" + ", ".join(f"{k}: {draw(_flow(depth - 1, keys))}" for k in chosen) + "}"


@st.composite
def _block(draw: st.DrawFn, depth: int, indent: int, keys: list[str]) -> list[str]:
    """A block mapping's lines at ``indent``; a plain set of ``keys`` repeats none."""
    pad = " " * indent
    lines: list[str] = []
    unique = keys is PLAIN_KEYS
    for key in draw(st.lists(st.sampled_from(keys), min_size=1, max_size=4, unique=unique)):
        if key == "<<":
            lines.append(f"{pad}<<: *base")
            continue
        kind = draw(st.sampled_from(["scalar", "flow", "map", "seq"] if depth > 0 else ["scalar", "flow"]))
        if key.startswith("?"):
            lines.append(f"{pad}{key}")
            lines.append(f"{pad}: {draw(st.sampled_from(SCALARS))}")
        elif kind == "scalar":
            lines.append(f"{pad}{key}: {draw(st.sampled_from(SCALARS))}")
        elif kind == "flow":
            lines.append(f"{pad}{key}: {draw(_flow(2, keys))}")
        elif kind == "map":
            lines.append(f"{pad}{key}:")
            lines += draw(_block(depth - 1, indent + 2, keys))
        else:
            lines.append(f"{pad}{key}:")
            for _ in range(draw(st.integers(1, 3))):
                if draw(st.booleans()):
                    lines.append(f"{pad}- {draw(st.sampled_from(SCALARS))}")
                else:
                    inner = draw(_block(depth - 1, indent + 2, keys))
                    lines.append(f"{pad}- {inner[0].lstrip()}")
                    lines += inner[1:]
    return lines


@st.composite
def _document(draw: st.DrawFn) -> str:
    plain = draw(st.booleans())
    lines = draw(_block(3, 0, PLAIN_KEYS if plain else KEYS))
    if any("*base" in line for line in lines) or (not plain and draw(st.booleans())):
        lines.insert(0, "base: &base {m: 1, o: [2]}")
    return "\n".join(lines) + "\n"


def _pairs(a: Node, b: Node) -> list[tuple[Node, Node]]:
    """The collections of two trees composed from one text, side by side (a key's own collections
    are not ``remember``'s: only values are walked)."""
    out: list[tuple[Node, Node]] = []
    seen: set[int] = set()
    stack = [(a, b)]
    while stack:
        x, y = stack.pop()
        if not isinstance(x, CollectionNode) or id(x) in seen:
            continue
        seen.add(id(x))
        assert type(x) is type(y)
        out.append((x, y))
        if isinstance(x, MappingNode):
            stack += [(vx, vy) for (_, vx), (_, vy) in zip(x.value, y.value, strict=True)]
        else:
            stack += list(zip(x.value, y.value, strict=True))
    return out


def _shape(child: Any) -> Any:
    """A collection's child (a node, or a mapping's pair) as its kinds and texts."""
    if isinstance(child, tuple):
        return tuple(_shape(c) for c in child)
    return (type(child), child.tag, child.value if isinstance(child, ScalarNode) else len(child.value))


def _ordered(value: Any) -> Any:
    if isinstance(value, dict):
        return [(k, _ordered(v)) for k, v in value.items()]
    if isinstance(value, list):
        return [_ordered(v) for v in value]
    return (type(value), value)


def _same_as_two_walks(text: str) -> None:
    expected_root = yn.compose(text)
    root = yn.compose(text)
    assert expected_root is not None and root is not None
    textedit.remember(expected_root)
    expected = yn.to_python(expected_root)
    value = textedit.remember_value(root, text)
    assert _ordered(value) == _ordered(expected)
    assert textedit.may_repeat_a_key(root) == textedit.may_repeat_a_key(expected_root)
    if isinstance(root, ScalarNode):
        return
    pairs = _pairs(expected_root, root)
    position = {id(y): i for i, (_, y) in enumerate(pairs)}
    expected_position = {id(x): i for i, (x, _) in enumerate(pairs)}
    below, expected_below = textedit.collections_of(root), textedit.collections_of(expected_root)
    assert below is not None and expected_below is not None
    assert sorted(position[id(n)] for n in below) == sorted(expected_position[id(n)] for n in expected_below)
    for x, y in pairs:
        read_x, read_y = getattr(x, textedit._READ), getattr(y, textedit._READ)
        assert read_y == y.value and read_y is not y.value  # as read, in a list of its own
        assert [_shape(c) for c in read_x] == [_shape(c) for c in read_y]


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(text=_document())
def test_one_walk_leaves_what_remember_and_to_python_leave(text: str) -> None:
    _same_as_two_walks(text)


@pytest.mark.parametrize(
    "text",
    [
        "a: 1\nb: {c: [x, 'y', ~, 1.5, true]}\n",
        "a: 1\na: 2\n",  # a repeated key
        "'a': 1\na: 2\n",  # the same key, quoted once
        "1: x\n'1': z\n",  # an int key and a string key
        "!!str a: 1\nb: 2\n",
        "base: &b {m: 1}\nc: *b\nd: *b\n",  # one node met twice
        "base: &b {m: 1}\nc:\n  <<: *b\n  o: 2\n",
        "? [k]\n: v\n",
        "- a\n- {b: 1}\n",
        "x\n",
        "just: [one, {flow: map}]\n",
    ],
)
def test_hostile_and_plain_documents(text: str) -> None:
    _same_as_two_walks(text)


def test_a_plain_document_takes_one_walk(monkeypatch: pytest.MonkeyPatch) -> None:
    def refused(*_: object) -> None:
        raise AssertionError("walked twice")

    monkeypatch.setattr(textedit, "remember", refused)
    monkeypatch.setattr(yn, "to_python", refused)
    root = yn.compose("apiVersion: v1\nkind: ConfigMap\ndata: {a: '1', b: [2, true, ~]}\n")
    assert root is not None
    value = textedit.remember_value(root, "no anchors here")
    assert value == {"apiVersion": "v1", "kind": "ConfigMap", "data": {"a": "1", "b": [2, True, None]}}
    assert not textedit.may_repeat_a_key(root)
