"""textedit: an edited node tree written back into the text it was composed from.

The table cases check the exact text (comments and layout kept where the entry is kept) and that it reads
back as the edited tree (``to_python`` of both agree); the property checks the latter on generated YAML.
"""

from __future__ import annotations

import gc
import weakref
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from trainjob_resources.yamltext import textedit
from trainjob_resources.yamltext import yamlnodes as yn
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

Edit = Callable[[MappingNode], object]


def composed(text: str) -> MappingNode:
    root = yn.compose(text)
    assert isinstance(root, MappingNode)
    textedit.remember(root)
    return root


def rendered(text: str, edit: Edit) -> tuple[str | None, MappingNode]:
    root = composed(text)
    edit(root)
    return textedit.render(text, root), root


def assert_reads_back(new_text: str, root: Node) -> None:
    reread = yn.compose(new_text)
    assert reread is not None
    assert yn.to_python(reread) == yn.to_python(root)


def check(text: str, edit: Edit, expected: str) -> None:
    new_text, root = rendered(text, edit)
    assert new_text == expected
    assert_reads_back(new_text, root)


# Edit helpers: paths are mapping keys (str) and sequence indexes (int).


def at(root: Node, *path: str | int) -> Any:
    node: Any = root
    for step in path:
        node = node.value[step] if isinstance(step, int) else yn.get(node, step)
    return node


def delete(*path: str | int) -> Edit:
    *parent, key = path

    def edit(root: MappingNode) -> None:
        node = at(root, *parent)
        if isinstance(key, int):
            node.value.pop(key)
        else:
            assert yn.delete_key(node, key)

    return edit


def set_to(value: Any, *path: str | int) -> Edit:
    *parent, key = path

    def edit(root: MappingNode) -> None:
        node = at(root, *parent)
        new = value if isinstance(value, Node) else yn.from_python(value)
        if isinstance(key, int):
            node.value[key] = new
        else:
            yn.set_key(node, key, new)

    return edit


def append(value: Any, *path: str | int) -> Edit:
    def edit(root: MappingNode) -> None:
        at(root, *path).value.append(value if isinstance(value, Node) else yn.from_python(value))

    return edit


def clear(*path: str | int) -> Edit:
    def edit(root: MappingNode) -> None:
        at(root, *path).value = []

    return edit


def edits(*steps: Edit) -> Edit:
    def edit(root: MappingNode) -> None:
        for step in steps:
            step(root)

    return edit


# 1. No edit.

IDENTITY = [
    "a: 1\n",
    "# head\na: 1  # one\n\n# about b\nb:\n  - x  # ex\n  - {w: 2}\nc: |+\n  keep\n\n# tail\n",
    "a: 'q'\nb: \"d\"\nc: [1, 2]\nd:\n- e: f\n  g: h\n",
    "a: 1\nb: 2",  # no final newline
]


@pytest.mark.parametrize("text", IDENTITY)
def test_no_edit_gives_the_same_text(text: str) -> None:
    assert textedit.render(text, composed(text)) == text


def test_no_edit_on_a_copy_gives_the_same_text() -> None:
    text = IDENTITY[1]
    copied = textedit.copy(composed(text))
    assert isinstance(copied, MappingNode)
    assert textedit.render(text, copied) == text


# 2. Deleting mapping entries.

ABC = "a: 1\n# about b\nb: 2  # b line\n# after b\nc: 3\n"

DELETIONS = [
    pytest.param(ABC, delete("b"), "a: 1\n# after b\nc: 3\n", id="middle"),
    pytest.param(ABC, delete("c"), "a: 1\n# about b\nb: 2  # b line\n", id="last"),
    pytest.param("# head\na: 1\nb: 2\n", delete("a"), "# head\nb: 2\n", id="first"),
    pytest.param(
        ABC,
        delete("a"),
        "# about b\nb: 2  # b line\n# after b\nc: 3\n",
        id="first-keeps-the-comment-above-the-next",
    ),
    pytest.param(ABC, edits(delete("a"), delete("b"), delete("c")), "{}\n", id="all"),
    pytest.param(ABC, edits(delete("a"), delete("b")), "# after b\nc: 3\n", id="first-two"),
    pytest.param(ABC, edits(delete("b"), delete("c")), "a: 1\n", id="last-two"),
    pytest.param(ABC, edits(delete("a"), delete("c")), "# about b\nb: 2  # b line\n", id="first-and-last"),
    pytest.param("a: 1\nb: 2\nc: 3\nd: 4\n", edits(delete("a"), delete("c")), "b: 2\nd: 4\n", id="two-runs"),
    pytest.param("a:\n  x: 1\n  w: 2\nb: 3\n", delete("a", "w"), "a:\n  x: 1\nb: 3\n", id="nested-last"),
    pytest.param("a:\n  x: 1\n  w: 2\nb: 3\n", delete("a", "x"), "a:\n  w: 2\nb: 3\n", id="nested-first"),
    pytest.param("a:\n  x: 1\nb: 3\n", delete("a", "x"), "a: {}\nb: 3\n", id="nested-all"),
    pytest.param("a: 1\nb:\n  x: 1\n  w: [2]\n", delete("b"), "a: 1\n", id="a-block-value"),
    pytest.param("a: 1\nb: |\n  t\n\nc: 2\n", delete("b"), "a: 1\nc: 2\n", id="a-block-scalar"),
    pytest.param("a: 1\nb: |+\n  t\n\n", delete("b"), "a: 1\n", id="a-kept-block-scalar"),
    pytest.param("a: 1\nb: |+\n  t\n\nc: 2\n", delete("c"), "a: 1\nb: |+\n  t\n\n", id="after-a-kept-block-scalar"),
    pytest.param("---\na: 1\nb: 2\n...\n", delete("b"), "---\na: 1\n...\n", id="document-markers"),
    pytest.param("a: 1\nb: 2", delete("b"), "a: 1", id="no-final-newline"),
]


@pytest.mark.parametrize(("text", "edit", "expected"), DELETIONS)
def test_deleting_mapping_entries(text: str, edit: Edit, expected: str) -> None:
    check(text, edit, expected)


# 3. Replacing values.

REPLACEMENTS = [
    pytest.param(
        ABC,
        set_to({"x": 1, "y": [1, 2]}, "b"),
        'a: 1\n# about b\nb:\n  x: 1\n  "y":\n  - 1\n  - 2\n# after b\nc: 3\n',
        id="scalar-to-mapping",
    ),
    pytest.param("a:\n  x: 1  # xc\n  w: 2\nb: 3\n", set_to("s", "a"), "a: s\nb: 3\n", id="mapping-to-scalar"),
    pytest.param("a:\n- 1\n- 2\nb: 2\n", set_to("s", "a"), "a: s\nb: 2\n", id="indentless-sequence-to-scalar"),
    pytest.param("a: |\n  text\n\nb: 2\n", set_to("s", "a"), "a: s\nb: 2\n", id="block-scalar-to-scalar"),
    pytest.param("a: 1  # the a\nb: 2\n", set_to("2", "a"), 'a: "2"\nb: 2\n', id="the-line-comment-goes"),
    pytest.param("a:  # the a\n  x: 1\nb: 2\n", set_to(None, "a"), "a: null\nb: 2\n", id="mapping-to-null"),
    pytest.param(
        "m:\n  a: 1\n  b: 2\nz: 0\n", set_to([{"n": 1}], "m", "a"), 'm:\n  a:\n  - "n": 1\n  b: 2\nz: 0\n', id="nested"
    ),
    pytest.param("k:\n- a\n- b\n", set_to("z", "k", 1), "k:\n- a\n- z\n", id="last-sequence-item"),
    pytest.param("a: 1\nb: 2\n", set_to("multi\nline\n", "b"), "a: 1\nb: 'multi\n\n  line\n\n  '\n", id="multiline"),
]


@pytest.mark.parametrize(("text", "edit", "expected"), REPLACEMENTS)
def test_replacing_values(text: str, edit: Edit, expected: str) -> None:
    check(text, edit, expected)


# 4. Appending keys to a block mapping.

APPENDS = [
    pytest.param("a: 1\nb: 2\n", set_to("n", "c"), 'a: 1\nb: 2\nc: "n"\n', id="scalar"),
    pytest.param(
        "a: 1\nb: 2  # bc\n# tail\n",
        set_to({"x": [1]}, "c"),
        "a: 1\nb: 2  # bc\nc:\n  x:\n  - 1\n# tail\n",
        id="mapping",
    ),
    pytest.param("a: 1\nb: 2", set_to("n", "c"), 'a: 1\nb: 2\nc: "n"', id="no-final-newline"),
    pytest.param("a: 1\nb:\n  c: 1\nz: 0\n", set_to("n", "b", "d"), 'a: 1\nb:\n  c: 1\n  d: "n"\nz: 0\n', id="nested"),
    pytest.param("a: 1\nb: |\n  text\n", set_to("n", "c"), 'a: 1\nb: |\n  text\nc: "n"\n', id="after-literal"),
    pytest.param("a: 1\nb: |-\n  text\n\n", set_to("n", "c"), 'a: 1\nb: |-\n  text\n\nc: "n"\n', id="after-strip"),
    pytest.param("a: 1\nb: |+\n  text\n\n", set_to("n", "c"), 'a: 1\nb: |+\n  text\n\nc: "n"\n', id="after-keep"),
    pytest.param(
        "a: 1\nb: |+\n  text\n\n\n# tail\n",
        set_to("n", "c"),
        'a: 1\nb: |+\n  text\n\n\nc: "n"\n# tail\n',
        id="after-keep-and-a-comment",
    ),
    pytest.param(
        "b:\n  c: |+\n    t\n\n", set_to("n", "b", "d"), 'b:\n  c: |+\n    t\n\n  d: "n"\n', id="after-nested-keep"
    ),
    pytest.param(
        "b:\n  c: |+\n    t\n\n", set_to("n", "d"), 'b:\n  c: |+\n    t\n\nd: "n"\n', id="outer-after-nested-keep"
    ),
    pytest.param(
        "x:\n  a: 1\nw: 1\n",
        set_to(ScalarNode(yn.STR_TAG, "multi\nline\n", style="|"), "x", "c"),
        "x:\n  a: 1\n  c: |\n    multi\n    line\nw: 1\n",
        id="a-literal-value",
    ),
    pytest.param(
        "a: 1\nb: 2\n", edits(delete("b"), set_to("n", "c")), 'a: 1\nc: "n"\n', id="in-place-of-a-deleted-last"
    ),
    pytest.param(
        "a: 1\nb: 2\n",
        edits(delete("a"), delete("b"), set_to("n", "c"), set_to([1], "d")),
        'c: "n"\nd:\n- 1\n',  # quoted: go-yaml v2 (kubectl) reads a plain n as false
        id="in-place-of-all",
    ),
]


@pytest.mark.parametrize(("text", "edit", "expected"), APPENDS)
def test_appending_keys(text: str, edit: Edit, expected: str) -> None:
    check(text, edit, expected)


# A block scalar's value depends on the lines after it: an edit there must not change it.

BLOCK_SCALARS = [
    pytest.param("a: |+\n  t\n\nb: 1\n", delete("b"), "a: |+\n  t\n\n", id="keep-then-a-removed-entry"),
    pytest.param("a: |+\n  t\nb: 1\n# c\n\nd: 2\n", delete("b"), "a: |+\n  t\n# c\n\nd: 2\n", id="keep-then-a-comment"),
]


@pytest.mark.parametrize(("text", "edit", "expected"), BLOCK_SCALARS)
def test_block_scalars(text: str, edit: Edit, expected: str) -> None:
    check(text, edit, expected)


# 5. Sequences.

INDENTLESS = "k:\n- a\n# about b\n- b  # bc\n- c\nz: 1\n"
INDENTED = "k:\n  - a\n  # about b\n  - b  # bc\n  - c\nz: 1\n"
ITEMS = "containers:\n- name: x\n  # res\n  resources:\n    limits: {cpu: 1}\n  image: i\n- name: w\n  resources: {}\n"
INDENTED_ITEMS = "containers:\n  - name: x  # nm\n    resources:\n      limits: {cpu: 1}\n  - name: w\n"

SEQUENCES = [
    pytest.param(INDENTLESS, delete("k", 0), "k:\n# about b\n- b  # bc\n- c\nz: 1\n", id="indentless-first"),
    pytest.param(INDENTLESS, delete("k", 1), "k:\n- a\n- c\nz: 1\n", id="indentless-middle"),
    pytest.param(INDENTLESS, delete("k", 2), "k:\n- a\n# about b\n- b  # bc\nz: 1\n", id="indentless-last"),
    pytest.param(
        INDENTLESS, append("d", "k"), "k:\n- a\n# about b\n- b  # bc\n- c\n- d\nz: 1\n", id="indentless-append"
    ),
    pytest.param(
        INDENTLESS,
        append({"n": 1, "m": [1]}, "k"),
        'k:\n- a\n# about b\n- b  # bc\n- c\n- "n": 1\n  m:\n  - 1\nz: 1\n',
        id="indentless-append-mapping",
    ),
    pytest.param("k:\n- a\n", edits(clear("k"), append("b", "k")), "k:\n- b\n", id="indentless-replace-all"),
    pytest.param(INDENTED, delete("k", 0), "k:\n  # about b\n  - b  # bc\n  - c\nz: 1\n", id="indented-first"),
    pytest.param(INDENTED, delete("k", 1), "k:\n  - a\n  - c\nz: 1\n", id="indented-middle"),
    pytest.param(INDENTED, delete("k", 2), "k:\n  - a\n  # about b\n  - b  # bc\nz: 1\n", id="indented-last"),
    pytest.param(INDENTED, clear("k"), "k: []\nz: 1\n", id="indented-all"),
    pytest.param(
        INDENTED, append("d", "k"), "k:\n  - a\n  # about b\n  - b  # bc\n  - c\n  - d\nz: 1\n", id="indented-append"
    ),
    pytest.param(
        INDENTED,
        append({"n": 1, "m": [1]}, "k"),
        'k:\n  - a\n  # about b\n  - b  # bc\n  - c\n  - "n": 1\n    m:\n    - 1\nz: 1\n',
        id="indented-append-mapping",
    ),
    pytest.param(
        ITEMS,
        delete("containers", 0, "resources"),
        "containers:\n- name: x\n  image: i\n- name: w\n  resources: {}\n",
        id="item-inner-key",
    ),
    pytest.param(
        ITEMS,
        delete("containers", 0, "name"),
        "containers:\n- # res\n  resources:\n    limits: {cpu: 1}\n  image: i\n- name: w\n  resources: {}\n",
        id="item-first-key",
    ),
    pytest.param(
        ITEMS,
        delete("containers", 1, "name"),
        ITEMS.replace("- name: w\n  resources", "- resources"),
        id="last-item-first-key",
    ),
    pytest.param(
        ITEMS, clear("containers", 1), ITEMS.replace("- name: w\n  resources: {}", "- {}"), id="item-all-keys"
    ),
    pytest.param(ITEMS, delete("containers", 0), "containers:\n- name: w\n  resources: {}\n", id="first-item"),
    pytest.param(
        INDENTED_ITEMS,
        delete("containers", 0, "name"),
        "containers:\n  - resources:\n      limits: {cpu: 1}\n  - name: w\n",
        id="indented-item-first-key",
    ),
    pytest.param(
        INDENTED_ITEMS, clear("containers", 0), "containers:\n  - {}\n  - name: w\n", id="indented-item-all-keys"
    ),
    pytest.param(
        INDENTED_ITEMS,
        set_to("z", "containers", 1, "image"),
        INDENTED_ITEMS + "    image: z\n",
        id="indented-item-append-last",
    ),
    pytest.param(
        INDENTED_ITEMS,
        set_to("z", "containers", 0, "image"),
        INDENTED_ITEMS.replace("  - name: w", "    image: z\n  - name: w"),
        id="indented-item-append-first",
    ),
]


@pytest.mark.parametrize(("text", "edit", "expected"), SEQUENCES)
def test_sequences(text: str, edit: Edit, expected: str) -> None:
    check(text, edit, expected)


# 6. Flow collections are written again in place.

FLOW = [
    pytest.param("m: {a: 1, b: 2}  # flow\nz: 1\n", delete("m", "a"), "m: {b: 2}  # flow\nz: 1\n", id="mapping-key"),
    pytest.param("m: {a: 1, b: 2}  # flow\nz: 1\n", clear("m"), "m: {}  # flow\nz: 1\n", id="mapping-all"),
    pytest.param("m: [1, 2, 3]  # flow\nz: 1\n", delete("m", 1), "m: [1, 3]  # flow\nz: 1\n", id="sequence-item"),
    pytest.param(
        "m: {a: 1, b: {c: 1, d: 2}}  # flow\nz: 1\n",
        delete("m", "b", "c"),
        "m: {a: 1, b: {d: 2}}  # flow\nz: 1\n",
        id="nested",
    ),
    pytest.param(
        "m:\n  p: {a: 1, b: 2}  # flow\n  o: 1\n",
        set_to({"x": [1, 2]}, "m", "p", "c"),
        "m:\n  p: {a: 1, b: 2, c: {x: [1, 2]}}  # flow\n  o: 1\n",
        id="append-block-value",
    ),
    pytest.param(
        "m: {\n  a: 1,\n  b: 2,\n}  # flow\nz: 1\n", delete("m", "a"), "m: {b: 2}  # flow\nz: 1\n", id="multiline"
    ),
    pytest.param("k:\n- [1, 2]  # c\n- x\n", delete("k", 0, 0), "k:\n- [2]  # c\n- x\n", id="in-a-sequence"),
]


@pytest.mark.parametrize(("text", "edit", "expected"), FLOW)
def test_flow_collections(text: str, edit: Edit, expected: str) -> None:
    check(text, edit, expected)


# 7. Edits inside a subtree that an edit higher up removes, replaces or moves.

NESTED = "a:\n  b:\n    c: 1\n    d: 2\n  e: 3\nf: 4\n"


def move_b_to(key: str) -> Edit:
    """Take ``a.b`` out of ``a``, edit it, and put it under ``key`` of the root."""

    def edit(root: MappingNode) -> None:
        b = at(root, "a", "b")
        assert yn.delete_key(at(root, "a"), "b")
        assert yn.delete_key(b, "c")
        yn.set_key(root, key, b)

    return edit


NESTED_EDITS = [
    pytest.param(NESTED, edits(delete("a", "b", "c"), delete("a", "b")), "a:\n  e: 3\nf: 4\n", id="parent-removed"),
    pytest.param(NESTED, edits(delete("a", "b", "c"), delete("a")), "f: 4\n", id="grandparent-removed"),
    pytest.param(
        NESTED,
        edits(delete("a", "b", "c"), set_to("y", "a", "b", "x"), set_to("gone", "a")),
        "a: gone\nf: 4\n",
        id="grandparent-replaced",
    ),
    pytest.param(
        NESTED,
        edits(delete("a", "b", "c"), delete("a", "e")),
        "a:\n  b:\n    d: 2\nf: 4\n",
        id="sibling-removed-after",
    ),
    pytest.param(
        NESTED,
        edits(delete("a", "b", "c"), delete("f")),
        "a:\n  b:\n    d: 2\n  e: 3\n",
        id="outer-removed-after",
    ),
    pytest.param(
        NESTED,
        edits(delete("a", "b", "c"), set_to(0, "f")),
        "a:\n  b:\n    d: 2\n  e: 3\nf: 0\n",
        id="outer-replaced-after",
    ),
    pytest.param(
        NESTED,
        edits(delete("a", "b", "c"), delete("a", "b", "d")),
        "a:\n  b: {}\n  e: 3\nf: 4\n",
        id="same-collection-twice",
    ),
    pytest.param(
        NESTED,
        edits(delete("a", "b", "d"), delete("a", "e")),
        "a:\n  b:\n    c: 1\nf: 4\n",
        id="last-of-two-levels",
    ),
    pytest.param(NESTED, move_b_to("g"), "a:\n  e: 3\nf: 4\ng:\n  d: 2\n", id="moved-to-a-new-key"),
    pytest.param(
        NESTED,
        move_b_to("f"),
        "a:\n  e: 3\nf:\n  d: 2\n",
        id="moved-over-a-later-key",
    ),
]


@pytest.mark.parametrize(("text", "edit", "expected"), NESTED_EDITS)
def test_nested_edits(text: str, edit: Edit, expected: str) -> None:
    check(text, edit, expected)


# 8. copy().

COPIED = "# head\nmeta:\n  name: x  # the name\n  labels:\n    a: b\nspec:\n  items:\n  - p: 1\n    q: 2\n"


def test_a_copy_renders_its_edits_against_the_original_text() -> None:
    root = composed(COPIED)
    before = yn.to_python(root)
    copied = textedit.copy(root)
    assert isinstance(copied, MappingNode)
    delete("meta", "labels")(copied)
    set_to("v", "meta", "annotations")(copied)
    delete("spec", "items", 0, "p")(copied)
    new_text = textedit.render(COPIED, copied)
    assert new_text == "# head\nmeta:\n  name: x  # the name\n  annotations: v\nspec:\n  items:\n  - q: 2\n"
    assert_reads_back(new_text, copied)
    assert yn.to_python(root) == before
    assert textedit.render(COPIED, root) == COPIED


def test_a_copy_shares_no_collection_with_the_original() -> None:
    root = composed(COPIED)
    copied = textedit.copy(root)
    assert isinstance(copied, MappingNode)
    clear("meta")(copied)
    clear("spec", "items")(copied)
    assert yn.to_python(root)["meta"] == {"name": "x", "labels": {"a": "b"}}
    assert yn.to_python(root)["spec"]["items"] == [{"p": 1, "q": 2}]


# 9. Fallbacks, and layouts that look like one but are written correctly.


def reverse(root: MappingNode) -> None:
    root.value.reverse()


def insert_between(root: MappingNode) -> None:
    root.value.insert(1, (yn.str_node("x"), yn.str_node("y")))


def insert_first(root: MappingNode) -> None:
    root.value.insert(0, (yn.str_node("x"), yn.str_node("y")))


FALLBACKS = [
    pytest.param("a: 1\nb: 2\n", reverse, id="reordered"),
    pytest.param("a: 1\nb: 2\nc: 3\n", insert_between, id="inserted-between"),
    pytest.param("a: 1\nb: 2\n", insert_first, id="inserted-first"),
    pytest.param("k:\n- a\n- b\n", set_to("z", "k", 0), id="sequence-item-replaced-not-last"),
    pytest.param("k:\n- # c\n  a: 1\n- b\n", delete("k", 0), id="comment-after-the-dash-of-a-removed-first-item"),
    pytest.param("{a: 1, b: 2}\n", delete("b"), id="flow-root"),
    pytest.param("? [x]\n: 1\nb: 2\n", delete("b"), id="complex-key"),
]


@pytest.mark.parametrize(("text", "edit"), FALLBACKS)
def test_fallbacks_give_none(text: str, edit: Edit) -> None:
    assert rendered(text, edit)[0] is None


def test_render_without_remember_gives_none() -> None:
    root = yn.compose("a: 1\n")
    assert isinstance(root, MappingNode)
    assert textedit.render("a: 1\n", root) is None


COMMENT_AFTER_DASH = [
    pytest.param("k:\n- # c\n  a: 1\n  b: 2\n", delete("k", 0, "a"), "k:\n- # c\n  b: 2\n", id="first-key"),
    pytest.param("k:\n- # c\n  a: 1\n  b: 2\n", delete("k", 0, "b"), "k:\n- # c\n  a: 1\n", id="last-key"),
    pytest.param("k:\n- # c\n  a: 1\n", clear("k", 0), "k:\n- # c\n  {}\n", id="all-keys"),
    pytest.param("k:\n- # c\n  a: 1\n", set_to(2, "k", 0, "b"), "k:\n- # c\n  a: 1\n  b: 2\n", id="append"),
    pytest.param("k:\n- b\n- # c\n  a: 1\n", delete("k", 1), "k:\n- b\n", id="removed-last-item"),
    pytest.param("k:\n-\n  a: 1\n- b\n", delete("k", 0), "k:\n- b\n", id="dash-alone-removed-first-item"),
]


@pytest.mark.parametrize(("text", "edit", "expected"), COMMENT_AFTER_DASH)
def test_a_comment_after_a_dash(text: str, edit: Edit, expected: str) -> None:
    check(text, edit, expected)


# Layouts that once gave text that did not read as the edited tree: now the right text, or None
# (the caller serializes) where text after the change would alter a block scalar.

ONCE_WRONG = [
    pytest.param("k:\n- a\nz: 1\n", clear("k"), "k: []\nz: 1\n", id="indentless-sequence-emptied"),
    pytest.param(
        "j:\n- k:\n  - a\n  z: 1\n- b\n",
        clear("j", 0, "k"),
        "j:\n- k: []\n  z: 1\n- b\n",
        id="indentless-sequence-emptied-in-an-item",
    ),
    pytest.param(
        "a:\n  b: 1\n",
        edits(set_to("n", "a", "c"), set_to("m", "d")),
        'a:\n  b: 1\n  c: "n"\nd: m\n',
        id="appends-meet-at-one-place",
    ),
    pytest.param("a: |+\n  t\nb: 1\n\nc: 2\n", delete("b"), None, id="keep-scalar-takes-the-next-blank-line"),
    pytest.param("a: |\n  x", set_to("n", "b"), None, id="literal-without-final-newline"),
    pytest.param("k:\n- |+\n  x", append("n", "k"), None, id="keep-without-final-newline"),
]


@pytest.mark.parametrize(("text", "edit", "expected"), ONCE_WRONG)
def test_layouts_that_once_went_wrong(text: str, edit: Edit, expected: str | None) -> None:
    new_text, root = rendered(text, edit)
    assert new_text == expected
    if new_text is not None:
        assert_reads_back(new_text, root)


def test_a_copy_of_an_edited_tree_keeps_its_edits() -> None:
    """A tree with edits already is copied without its read state: render declines, the caller serializes."""
    root = composed(COPIED)
    delete("meta", "labels")(root)
    copied = textedit.copy(root)
    assert isinstance(copied, MappingNode)
    delete("spec", "items", 0, "q")(copied)
    assert textedit.render(COPIED, copied) is None


# Bookkeeping.


@pytest.fixture
def gc_disabled() -> Iterator[None]:
    """As in the CLI: a tree that only the cycle collector could free would stay."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


@pytest.mark.usefixtures("gc_disabled")
def test_remember_makes_no_reference_cycle_through_the_root() -> None:
    root = composed(COPIED)
    refs = [weakref.ref(root), weakref.ref(at(root, "spec")), weakref.ref(at(root, "spec", "items", 0))]
    del root
    assert [ref() for ref in refs] == [None, None, None]


@pytest.mark.usefixtures("gc_disabled")
def test_render_makes_no_reference_cycle_through_the_root() -> None:
    root = composed(COPIED)
    delete("spec", "items", 0, "p")(root)
    set_to("v", "meta", "w")(root)
    assert textedit.render(COPIED, root) is not None
    ref = weakref.ref(root)
    del root
    assert ref() is None


@pytest.mark.usefixtures("gc_disabled")
@pytest.mark.parametrize("copy", [textedit.copy, yn.deep_copy], ids=["textedit.copy", "yamlnodes.deep_copy"])
def test_copies_make_no_reference_cycle(copy: Any) -> None:
    copied = copy(composed(COPIED))
    refs = [weakref.ref(copied), weakref.ref(at(copied, "spec", "items"))]
    del copied
    assert [ref() for ref in refs] == [None, None]


# 10. Property: on generated block YAML and random edits, render gives None or text that reads as the tree.
#
# The generator covers the layouts that once went wrong (see ONCE_WRONG): documents with and without
# a final newline, `|+` scalars, block sequences emptied, new entries in several read collections.

# A generated tree: ("scalar", spelling), ("block", indicator, lines, trailing blank line), ("flow", text),
# ("map", [(key, value, decoration)]), ("seq", [(value, decoration)], indentless).
# A decoration: (blank line above, comment line above, comment at the end of the line, `-` on a line of its own).
Tree = tuple[Any, ...]

SCALARS = st.sampled_from(["a", "b c", "1", "true", "'q x'", '"d"', "", "~", "x-y"])
BLOCKS = st.tuples(
    st.just("block"),
    st.sampled_from(["|", "|-", "|+"]),
    st.lists(st.sampled_from(["t", "u v", "  w"]), min_size=1, max_size=2).filter(lambda lines: lines[0] != "  w"),
    st.booleans(),
)
FLOWS = st.sampled_from(["{}", "[]", "{a: 1, b: [x]}", "[1, {c: d}]"])
LEAVES = st.one_of(st.tuples(st.just("scalar"), SCALARS), BLOCKS, st.tuples(st.just("flow"), FLOWS))
DECORATIONS = st.tuples(st.booleans(), st.booleans(), st.booleans(), st.booleans())


def mappings(values: st.SearchStrategy[Tree]) -> st.SearchStrategy[Tree]:
    entry = st.tuples(st.sampled_from(["a", "b", "c", "d", "e"]), values, DECORATIONS)
    return st.tuples(st.just("map"), st.lists(entry, min_size=1, max_size=4, unique_by=lambda e: e[0]))


def sequences(values: st.SearchStrategy[Tree]) -> st.SearchStrategy[Tree]:
    return st.tuples(st.just("seq"), st.lists(st.tuples(values, DECORATIONS), min_size=1, max_size=3), st.booleans())


TREES = st.recursive(LEAVES, lambda children: st.one_of(mappings(children), sequences(children)), max_leaves=12)


def value_lines(tree: Tree, indent: int, comment: str) -> tuple[str, list[str]]:
    """The rest of the line of a ``key:`` or ``-`` at ``indent`` holding ``tree``, and the lines after it."""
    kind = tree[0]
    if kind == "scalar":
        return (" " + tree[1] if tree[1] else "") + comment, []
    if kind == "flow":
        return " " + tree[1] + comment, []
    if kind == "block":
        _, indicator, lines, blank = tree
        return " " + indicator + comment, [" " * (indent + 2) + line for line in lines] + ([""] if blank else [])
    if kind == "map":
        return comment, map_lines(tree, indent + 2)
    indentless = tree[2]
    return comment, seq_lines(tree, indent if indentless else indent + 2)


def map_lines(tree: Tree, indent: int) -> list[str]:
    lines: list[str] = []
    for key, value, (blank, above, comment, _) in tree[1]:
        lines += [""] if blank else []
        lines += [" " * indent + f"# above {key}"] if above else []
        rest, after = value_lines(value, indent, f"  # on {key}" if comment else "")
        lines += [" " * indent + key + ":" + rest, *after]
    return lines


def seq_lines(tree: Tree, indent: int) -> list[str]:
    lines: list[str] = []
    for i, (value, (blank, above, comment, alone)) in enumerate(tree[1]):
        lines += [""] if blank else []
        lines += [" " * indent + f"# above item {i}"] if above else []
        if value[0] in ("map", "seq"):
            inner = map_lines(value, indent + 2) if value[0] == "map" else seq_lines(value, indent + 2)
            if alone or not inner[0]:
                lines += [" " * indent + "-" + (f"  # after dash {i}" if comment else ""), *inner]
            else:  # the item's first line goes after the dash, a comment line too (`- # c`)
                lines += [" " * indent + "- " + inner[0][indent + 2 :], *inner[1:]]
        else:
            rest, after = value_lines(value, indent, f"  # on item {i}" if comment else "")
            lines += [" " * indent + "-" + rest, *after]
    return lines


@st.composite
def documents(draw: st.DrawFn) -> str:
    lines = map_lines(draw(mappings(TREES)), 0)
    head = ["# head"] if draw(st.booleans()) else []
    tail = ["# tail"] if draw(st.booleans()) else []
    return "\n".join([*head, *lines, *tail]) + ("\n" if draw(st.integers(0, 4)) else "")


NEW_VALUES: list[Any] = [
    "x",
    "2",
    "",
    None,
    "multi\nline\n",
    {"p": 1},
    {"p": {"q": [1, 2]}},
    ["r", {"s": None}],
    {},
    [],
]
OPERATIONS = ["delete key", "set key", "add key", "remove item", "append item"]
# (operation, which collection, which entry, which new value)
EDITS = st.lists(
    st.tuples(st.sampled_from(OPERATIONS), st.integers(0, 50), st.integers(0, 50), st.integers(0, len(NEW_VALUES) - 1)),
    min_size=1,
    max_size=5,
)


def all_collections(root: Node) -> list[Any]:
    found: list[Any] = []
    stack = [root]
    while stack:
        node = stack.pop()
        if isinstance(node, MappingNode):
            found.append(node)
            stack += reversed([v for _, v in node.value])
        elif isinstance(node, SequenceNode):
            found.append(node)
            stack += reversed(node.value)
    return found


def apply_edits(root: Node, plan: list[tuple[str, int, int, int]]) -> None:
    """Apply ``plan`` to the collections of ``root``."""
    grown: set[int] = set()  # the read collections that got new entries
    for serial, (operation, which, entry, new) in enumerate(plan):
        kind = MappingNode if operation.endswith("key") else SequenceNode
        adds = operation in ("add key", "append item")
        candidates = all_collections(root)
        targets = [c for c in candidates if isinstance(c, kind) and (c.value or adds)]
        if not targets:
            continue
        target = targets[which % len(targets)]
        read = target.start_mark is not None
        value = yn.from_python(NEW_VALUES[new])
        if operation in ("delete key", "remove item"):
            target.value.pop(entry % len(target.value))
        elif operation == "set key":
            i = entry % len(target.value)
            target.value[i] = (target.value[i][0], value)
        elif operation == "add key":
            assert isinstance(target, MappingNode)
            yn.set_key(target, f"new{serial}", value)
        else:
            target.value.append(value)
        if adds and read:
            grown.add(id(target))


@pytest.mark.slow
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(
    text=documents(),
    plan=EDITS,
    how=st.sampled_from(["in place", "on a copy"]),
)
def test_render_gives_none_or_text_that_reads_as_the_tree(
    text: str, plan: list[tuple[str, int, int, int]], how: str
) -> None:
    original = composed(text)
    assert textedit.render(text, original) == text
    before = yn.to_python(original)
    copied = textedit.copy(original) if how == "on a copy" else original
    assert isinstance(copied, MappingNode)
    root = copied
    apply_edits(root, plan)
    new_text = textedit.render(text, root)
    if new_text is not None:
        assert_reads_back(new_text, root)
    if how != "in place":
        assert yn.to_python(original) == before
        assert textedit.render(text, original) == text
