"""provenance.dump and record_text against json.dumps with the same options.

Both keep the C encoder they make once; what they return (or raise) must be what ``json.dumps``
returns (or raises) for any value YAML reading can give: nested mappings and lists of strings,
integers, floats, booleans and nulls, with keys of those types too.
"""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from trainjob_resources.checks import provenance

_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-(10**30), 10**30)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=8)
    | st.sampled_from(["\u2028", "\x00", "é", '"', "\\", "𝄞"])
)
_KEYS = st.text(max_size=4) | st.integers(-3, 3) | st.booleans() | st.none() | st.floats(allow_nan=False)
_VALUES = st.recursive(
    _SCALARS, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_KEYS, inner, max_size=4), max_leaves=20
)


def _outcome(dumps: Any, value: Any) -> tuple[str, str]:
    try:
        return "ok", dumps(value)
    except Exception as err:  # the same exception, of the same type, is what counts
        return type(err).__name__, str(err)


@pytest.mark.slow
@settings(max_examples=500, deadline=None)
@given(value=_VALUES)
def test_dump_is_json_dumps_with_sorted_keys(value: Any) -> None:
    expected = _outcome(lambda v: json.dumps(v, sort_keys=True, separators=(",", ":"), ensure_ascii=False), value)
    assert _outcome(provenance.dump, value) == expected


@pytest.mark.slow
@settings(max_examples=500, deadline=None)
@given(value=_VALUES)
def test_record_text_is_json_dumps_in_order(value: Any) -> None:
    expected = _outcome(lambda v: json.dumps(v, separators=(",", ":"), ensure_ascii=False), value)
    assert _outcome(provenance.record_text, value) == expected


def test_values_json_cannot_write_are_refused_alike() -> None:
    for value in ({1: "a", "b": 2}, {(1, 2): 3}, {"a": {1, 2}}, [math.nan], {"x": object()}):
        for ours, sort_keys in ((provenance.dump, True), (provenance.record_text, False)):
            expected = _outcome(
                lambda v, s=sort_keys: json.dumps(v, sort_keys=s, separators=(",", ":"), ensure_ascii=False), value
            )
            assert _outcome(ours, value) == expected, value
