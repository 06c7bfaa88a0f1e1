"""values/text.py: what a message shows of a tenant's text, against the escaping rule it stands for."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from trainjob_resources.values import text

UNSAFE = "\x00\x1b\x7f\x85\x9f\u00ad\u061c\u180e\u200b\u200f\u2028\u202e\u2060\u2069\ufeff\ufffb"


def reference(value: str) -> str:
    return text._UNSAFE.sub(text._escape, value)


@given(st.text(alphabet=st.characters() | st.sampled_from(list(UNSAFE)), max_size=40))
def test_printable_escapes_exactly_the_unsafe_characters(value: str) -> None:
    assert text.printable(value) == reference(value)


def test_plain_ascii_is_shown_as_it_is_and_controls_are_escaped() -> None:
    assert text.printable("node/initContainers/data-loader: 64Gi") == "node/initContainers/data-loader: 64Gi"
    assert text.printable("a\x1b[31mb\x7f") == "a\\x1b[31mb\\x7f"
    assert text.printable("x\u202ey") == "x\\u202ey"
