"""yamlnodes.to_python against PyYAML's own safe constructor, on mappings with merge keys.

``to_python`` builds values itself (for speed, and to never fail), with one reading that differs
on purpose: timestamps stay strings. Everything else, merge keys (one mapping or a list of them,
before, between or after a mapping's own keys) and keys that are not strings, must read as
PyYAML reads it, key order included (a list of merged mappings: the first one's keys, then what each
next one adds). Repeated keys are left out: there the function reads the first on purpose.
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from trainjob_resources.yamltext import yamlnodes as yn


class _Reference(yaml.SafeLoader):
    """PyYAML's safe loading, timestamps as strings (as in JSON and the Kubernetes API)."""


_Reference.add_constructor("tag:yaml.org,2002:timestamp", yaml.SafeLoader.construct_yaml_str)  # type: ignore[type-var]

# No null key and no plain ``y``: compose refuses them (go-yaml reads them otherwise; test_yaml_oracle.py).
KEYS = ["a", "b", "c", "d", "1", "true", "'null'", "2.5", "'q'", "2001-12-14"]
SCALARS = ["x", "1", "1.5", "true", "null", "~", "'s'", '"t"', "2001-12-14", "0x1F", "-.inf", "''"]
ANCHORS = {"p": "{a: 1, b: {x: z}, e: 5}", "q": "{c: [1, 2], a: 9}", "r": "{}"}


def _constructed(key: str) -> Any:
    """A key as Python holds it: ``1`` and ``true`` are one key there (True == 1)."""
    return yaml.load(key, Loader=_Reference)


@st.composite
def _value(draw: st.DrawFn, depth: int) -> str:
    if depth <= 0 or draw(st.booleans()):
        return draw(st.sampled_from(SCALARS))
    if draw(st.booleans()):
        return "[" + ", ".join(draw(st.lists(_value(depth - 1), max_size=3))) + "]"
    return draw(_mapping(depth - 1))


@st.composite
def _mapping(draw: st.DrawFn, depth: int) -> str:
    keys = draw(st.lists(st.sampled_from(KEYS), unique_by=_constructed, max_size=4))
    entries = [f"{k}: {draw(_value(depth))}" for k in keys]
    if draw(st.booleans()):
        merged = draw(st.lists(st.sampled_from(sorted(ANCHORS)), min_size=1, max_size=3, unique=True))
        target = (
            f"*{merged[0]}"
            if len(merged) == 1 and draw(st.booleans())
            else "[" + ", ".join(f"*{m}" for m in merged) + "]"
        )
        entries.insert(draw(st.integers(0, len(entries))), f"<<: {target}")
    return "{" + ", ".join(entries) + "}"


def _document(body: str) -> str:
    anchors = "".join(f"anchor_{name}: &{name} {text}\n" for name, text in ANCHORS.items())
    return anchors + f"top: {body}\n"


def _ordered(value: Any) -> Any:
    """``value`` with its mappings as lists of pairs: the order of keys counts too."""
    if isinstance(value, dict):
        return [(k, _ordered(v)) for k, v in value.items()]
    if isinstance(value, list):
        return [_ordered(v) for v in value]
    return value


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(body=_mapping(3))
def test_to_python_reads_as_pyyaml(body: str) -> None:
    text = _document(body)
    expected: Any = yaml.load(text, Loader=_Reference)  # a SafeLoader
    node = yn.compose(text)
    assert node is not None
    assert _ordered(yn.to_python(node)) == _ordered(expected), text


def test_a_merge_key_after_string_keys() -> None:
    """The keys before the merge key are read again, after what it merges (as PyYAML orders them)."""
    top = yn.to_python(yn.compose(_document("{z: own, a: 2, <<: *p, w: 1}")))["top"]
    assert list(top.items()) == [("a", 2), ("b", {"x": "z"}), ("e", 5), ("z", "own"), ("w", 1)]


def test_from_python_writes_shared_values_as_aliases_and_quotes_what_would_read_as_another_type() -> None:
    shared = {"cpu": "1"}
    assert "&" in yn.serialize(yn.from_python({"limits": shared, "requests": shared}))  # an alias, as before
    other = {"n": 2, "b": True, "x": None, "f": 1.5}
    assert yn.serialize(yn.from_python(other)) == '"n": 2\nb: true\nx: null\nf: 1.5\n'
    assert yn.serialize(yn.from_python({"cpu": "2", "memory": "64Gi"})) == 'cpu: "2"\nmemory: 64Gi\n'
