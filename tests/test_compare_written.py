"""``first_written_difference``: where a tenant's copy differs from the platform's runtime, said in the
copy's own words. Generated pairs (the platform's tree, a copy made from it by edits): the answer is
None exactly when ``differing`` finds no field, and nothing in it (the path, the value) carries a
string that only the platform's tree has (issue 46)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from trainjob_resources.kube.compare import differing, first_written_difference

# Words the copy may share with the platform's tree, and words only the platform's tree has.
SHARED = st.sampled_from(["a", "b", "name", "env", "image", "1Gi", "1024Mi", "x"])
HIDDEN = ("SECRET_NAME", "secret-value", "hidden-key")
PLATFORM_ONLY = st.sampled_from(HIDDEN)


def trees(words: st.SearchStrategy[str]) -> st.SearchStrategy[Any]:
    leaves = st.one_of(st.none(), st.integers(0, 3), words)
    return st.recursive(
        leaves,
        lambda children: st.one_of(
            st.lists(children, max_size=3),
            st.dictionaries(words, children, max_size=3),
            st.lists(st.fixed_dictionaries({"name": words, "value": children}), max_size=3),
        ),
        max_leaves=12,
    )


def _edited(value: Any, data: st.DataObject) -> Any:
    """A copy of ``value`` as a tenant would write it from what they know: every platform-only word left
    out (a key or a named entry dropped, a value replaced), other entries sometimes dropped or replaced."""
    if isinstance(value, dict):
        kept = {k: _edited(v, data) for k, v in value.items() if k not in HIDDEN and data.draw(st.integers(0, 3))}
        return {**kept, **data.draw(st.dictionaries(SHARED, st.one_of(st.none(), SHARED), max_size=1))}
    if isinstance(value, list):
        return [
            _edited(v, data)
            for v in value
            if not (isinstance(v, dict) and v.get("name") in HIDDEN) and data.draw(st.integers(0, 3))
        ]
    if value in HIDDEN:
        return data.draw(SHARED)
    return data.draw(st.one_of(st.just(value), st.just(value), SHARED))


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(platform=trees(st.one_of(SHARED, PLATFORM_ONLY)), data=st.data())
def test_the_copy_learns_nothing_it_did_not_write(platform: Any, data: st.DataObject) -> None:
    copy = _edited(platform, data)
    found = first_written_difference({"spec": copy}, {"spec": platform})
    assert (found is None) == (differing({"spec": copy}, {"spec": platform}) == [])
    if found is None:
        return
    path, value = found
    told = path + json.dumps(value)
    for word in HIDDEN:
        assert word not in told, (word, found)


def test_each_kind_of_difference_is_named_where_the_copy_has_it() -> None:
    platform = {"env": [{"name": "TOKEN", "value": "theirs"}, {"name": "ONLY_THEIRS"}], "labels": {"k": "v"}}
    cases: list[tuple[dict[str, Any], tuple[str, Any]]] = [
        ({**platform, "env": [{"name": "TOKEN", "value": "mine"}]}, ("env[TOKEN].value", "mine")),
        ({**platform, "env": [{"name": "TOKEN"}, {"name": "ONLY_THEIRS"}]}, ("env[TOKEN]", {"name": "TOKEN"})),
        ({**platform, "env": [{"name": "TOKEN", "value": "theirs"}]}, ("env", [{"name": "TOKEN", "value": "theirs"}])),
        ({**platform, "labels": {}}, ("labels", {})),
        ({"env": platform["env"]}, ("", {"env": platform["env"]})),
        ({**platform, "extra": 1}, ("extra", 1)),
    ]
    for copy, expected in cases:
        assert first_written_difference(copy, platform) == expected, copy
    assert first_written_difference({"limits": {"memory": "1Gi"}}, {"limits": {"memory": "1024Mi"}}) is None
