"""yamltext/goyaml.py's go-yaml readings, as the running go-yaml gave them (tests/yamloracle, issue 30).

These run without Go; tests/test_yaml_oracle.py checks the same rules against the real go-yaml on
generated documents. Each row: a plain scalar, go-yaml v2's reading (sigs.k8s.io/yaml: kubectl),
go-yaml v3's (kyaml: kustomize), and whether this function's reader refuses it as a value.
"""

from __future__ import annotations

import math
import re
from typing import Any

import pytest
from trainjob_resources.yamltext import goyaml
from trainjob_resources.yamltext import yamlnodes as yn

ROWS: list[tuple[str, Any, Any, bool]] = [
    ("y", True, "y", True),
    ("N", False, "N", True),
    ("yes", True, "yes", True),
    ("Off", False, "Off", True),
    ("true", True, True, False),
    ("tRue", "tRue", "tRue", False),
    ("~", None, None, False),
    (".inf", math.inf, math.inf, False),
    ("1:30", "1:30", "1:30", True),
    ("0o17", 15, 15, True),
    ("0B101", 5, 5, True),
    ("0b101", 5, 5, False),
    ("0X1F", 31, 31, True),
    ("0x1F", 31, 31, False),
    ("017", 15, 15, False),
    ("08", 8.0, 8.0, True),
    ("+1", 1, 1, False),
    ("1_000", 1000, 1000, False),
    ("1e3", 1000.0, 1000.0, True),
    ("1.0e+3", 1000.0, 1000.0, False),
    ("+.5", 0.5, 0.5, True),
    (".5_0", 0.5, 0.5, False),
    (".9_9e84", 9.9e83, 9.9e83, True),
    ("._5", "._5", "._5", False),
    ("1e400", "1e400", "1e400", False),
    ("18446744073709551615", 18446744073709551615, 18446744073709551615, False),
    ("99999999999999999999", 1e20, 1e20, True),
    ("2001-12-14", "2001-12-14", "2001-12-14", False),
    ("=", "=", "=", False),
    ("64Gi", "64Gi", "64Gi", False),
]


@pytest.mark.parametrize(("text", "v2", "v3", "refused"), ROWS, ids=[r[0] for r in ROWS])
def test_go_yaml_reads_a_plain_scalar_as_the_oracle_did(text: str, v2: Any, v3: Any, refused: bool) -> None:
    assert goyaml.same(goyaml.v2_value(text), v2) and goyaml.same(goyaml.v3_value(text), v3)
    if refused:
        with pytest.raises(yn.RefusedYamlError, match=re.escape(f"the plain scalar {text} at k is refused")):
            yn.compose(f"k: {text}\n")
    else:
        assert yn.compose(f"k: {text}\n") is not None
        assert yn.compose(f"k: '{text}'\n") is not None  # quoted, a string to all


@pytest.mark.parametrize(
    ("key", "name"),
    [
        ("1", "1"),
        ("true", "true"),
        ("2.5", "2.5"),
        ("1e3", "1000"),
        ("0x1F", "31"),
        ("True", "true"),
        ("1.5e7", "1.5e+07"),
    ],
)
def test_sigs_k8s_io_yaml_names_a_key_as_the_oracle_did(key: str, name: str) -> None:
    assert goyaml.json_key(goyaml.v2_value(key)) == name
    if key == name:
        assert yn.compose(f"{key}: v\n") is not None
    else:
        with pytest.raises(yn.RefusedYamlError, match="is refused"):
            yn.compose(f"{key}: v\n")


@pytest.mark.parametrize(
    "text",
    ["k: !!binary aGk=\n", "k: !foo x\n", "k: ! 12\n", "k: !!set {a}\n", "k: !!int 0o17\n", "%YAML 1.1\n---\nk: 1\n"],
)
def test_a_tag_or_directive_go_yaml_reads_otherwise_is_refused(text: str) -> None:
    with pytest.raises(yn.RefusedYamlError, match="is refused"):
        yn.compose(text)


@pytest.mark.parametrize(
    "text", ['k: !!int "5"\n', 'k: !!null ""\n', "k: !!str 12\n", "k: !!float 1\n", "k: !!map {}\n"]
)
def test_a_core_tag_every_reader_agrees_on_is_read_and_written_back_untagged_or_as_it_was(text: str) -> None:
    node = yn.compose(text)
    assert node is not None
    written = yn.serialize(yn.deep_copy(node))
    assert "! " not in written and yn.to_python(yn.compose(written)) == yn.to_python(node), written


def test_the_writer_quotes_what_go_yaml_would_read_otherwise() -> None:
    node = yn.compose("a: 'y'\nb: '0o17'\nc: '1e3'\nd: '2001-12-14'\n")
    assert node is not None
    assert yn.serialize(node) == "a: 'y'\nb: '0o17'\nc: '1e3'\nd: '2001-12-14'\n"
    plain = yn.MappingNode(yn.MAP_TAG, [(yn.text_node("k"), yn.ScalarNode(yn.STR_TAG, "y"))])
    assert yn.serialize(plain) == "k: 'y'\n"  # quoted, where PyYAML's writer alone wrote it plain


def test_a_folded_block_scalar_kyaml_writes_back_otherwise_is_refused() -> None:
    """kyaml's writer (go-yaml v3) added a line break to ``>`` scalars of several lines (the oracle
    found it: kustomize would apply another string than the one checked); one line is kept."""
    assert yn.to_python(yn.compose("k: >-\n  one long\n  line\n")) == {"k": "one long line"}
    for text in ("k: >-\n  a\n    more\n", "k: >+\n  x\n\nc: 1\n", "k: >\n  a\n\n  b\n"):
        with pytest.raises(yn.RefusedYamlError, match=r"the folded block scalar \(>\) at k is refused"):
            yn.compose(text)


def test_an_empty_key_is_refused() -> None:
    for text in ("k:\n  &a : v\n", "{? : v}\n", 'k: {!!null "": v}\n'):
        with pytest.raises(yn.RefusedYamlError, match=r"empty mapping key|the tag !!null"):
            yn.compose(text)
