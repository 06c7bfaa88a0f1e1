"""The text layer: however the items are laid out, the function returns the same objects, and
items it does not change come back as their exact text."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st
from trainjob_resources.krm import resource_list as krm
from trainjob_resources.yamltext import layout

from tests.goldens import cases, run_function
from tests.hostile import HEADER


def indented(text: str, by: int = 2) -> str:
    """The same ResourceList with its items block indented (``items:\\n  - a``), as some tools write it."""
    head, _, rest = text.partition("items:\n")
    lines = rest.splitlines(keepends=True)
    out = []
    in_items = True
    for line in lines:
        if in_items and line.strip() and not line.startswith((" ", "-", "#")):
            in_items = False
        out.append(" " * by + line if in_items and line.strip() else line)
    return head + "items:\n" + "".join(out)


@pytest.mark.parametrize("case", cases("success"), ids=lambda p: p.name)
def test_indented_items_give_the_same_objects(case: Path) -> None:
    text = (case / "input.yaml").read_text()
    shifted = indented(text)
    assert layout.split(shifted) is not None, "the indented form is read item by item too"
    assert yaml.safe_load(shifted)["items"] == yaml.safe_load(text)["items"]
    code, out, err = run_function(shifted.encode())
    assert code == 0, err
    assert yaml.safe_load(out)["items"] == yaml.safe_load((case / "expected.yaml").read_text())["items"]


def test_untouched_items_keep_their_text_and_comments() -> None:
    text = """\
# a comment before the list
apiVersion: config.kubernetes.io/v1
kind: ResourceList
functionConfig:
  apiVersion: v1
  kind: ConfigMap
  metadata: {name: cfg}
  data: {mode: materialize}  # kept
items:
  # before the first item
  - apiVersion: v1
    kind: ConfigMap   # a comment
    metadata:
      name: a
    data:
      script: |
        - not an item
        # not a comment
  # between items
  - apiVersion: v1
    kind: ConfigMap
    metadata: {name: b}
# trailing
"""
    code, out, _ = run_function(text.encode())
    assert code == 0
    assert out.decode() == text


@pytest.mark.parametrize(
    "text",
    [
        '{"apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList", "items": []}',
        "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: [{a: 1}]\n",
        "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- &a {kind: X}\n- *a\n",
        "apiVersion: config.kubernetes.io/v1\r\nkind: ResourceList\r\nitems:\r\n- {kind: X}\r\n",
    ],
    ids=["json", "flow items", "anchors", "crlf"],
)
def test_shapes_the_text_layer_leaves_to_the_whole_document_reader(text: str) -> None:
    assert layout.split(text) is None


API = "trainer.kubeflow.org/v1alpha1"


@pytest.mark.parametrize(
    ("text", "dash", "hint"),
    [
        (f"- apiVersion: {API}\n  kind: TrainJob\n", 0, (API, "TrainJob")),
        (f"  - kind: TrainJob  # a job\n    metadata: {{}}\n    apiVersion: {API}\n", 2, (API, "TrainJob")),
        (f"- apiVersion: {API}\n  kind: TrainJob#x\n", 0, None),  # the value is `TrainJob#x`
        (f"- apiVersion: {API}\n  kind: 'TrainJob'\n", 0, None),  # quoted: read eagerly
        (f"- apiVersion: {API}\n  kind: TrainJob\n  kind: TrainJob\n", 0, None),  # twice
        (f"- apiVersion: {API}\n  spec:\n    kind: TrainJob\n", 0, None),  # not top level
        ("- apiVersion: v1\n  kind: TrainJob\n", 0, None),  # another group
        (f"- apiVersion: {API}\n  kind: ConfigMap\n", 0, None),
    ],
)
def test_trainjobs_are_recognized_from_their_top_level_lines(text: str, dash: int, hint: object) -> None:
    assert krm._lazy_hint(text, dash) == hint


def test_a_control_character_in_the_comments_before_the_first_item_is_an_error() -> None:
    """Those comment lines go out as they came: they are read as YAML too (found by atheris)."""
    data = HEADER + b"items:\n# a note\x14\n- {apiVersion: v1, kind: A}\n"
    code, out, _ = run_function(data)
    assert code == 1
    assert b"control characters are not allowed" in out


# Texts of lines for the searches layout.py runs on the whole input.
_TOKENS = ["items:", "items: # c", "\n", " ", "  ", "#", "---", "...", "-", "- a", "a", ":"]
_LINE_TEXT = st.lists(st.sampled_from(_TOKENS), max_size=20).map("".join)


@given(text=_LINE_TEXT)
def test_items_keys_are_what_finditer_finds(text: str) -> None:
    assert layout._items_keys(text) == [(m.start(), m.end()) for m in layout._ITEMS_KEY.finditer(text)]
