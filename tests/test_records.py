"""The slotted value classes keep what their dataclasses gave: equality, hash, repr, and no ``__dict__``."""

from __future__ import annotations

import pytest
from trainjob_resources.kube.quantity import Quantity, parse_quantity
from trainjob_resources.resolve.bundle import Bundle
from trainjob_resources.trainer.effective import Effective, Source
from trainjob_resources.trainer.runtime_view import ContainerInfo, RuntimeContainerView
from trainjob_resources.values.violations import Violation


def test_frozen_records_compare_and_hash_by_value() -> None:
    a = Violation("spec.x", "bad", current_value=1)
    b = Violation("spec.x", "bad", "error", 1, None)
    assert a == b
    assert hash(a) == hash(b)
    assert a != Violation("spec.x", "bad", "warning", 1)
    assert a != ("spec.x", "bad", "error", 1, None)
    assert len({a, b, Source("runtime", None), Source("runtime", None)}) == 2
    with pytest.raises(AttributeError):
        a.__dict__  # noqa: B018


def test_mutable_records_compare_by_value_and_are_unhashable() -> None:
    container = ContainerInfo("node", 0, "containers", 0, RuntimeContainerView("node", {}, None))
    assert Effective(container, {}) == Effective(container, {}, {}, [])
    with pytest.raises(TypeError):
        hash(Effective(container, {}))


def test_internal_slots_are_neither_compared_nor_shown() -> None:
    bundle = Bundle()
    bundle.namespace_policy("LimitRange", "team-a")  # fills the private index
    assert bundle == Bundle()
    assert "_namespace_policy" not in repr(bundle)
    assert repr(parse_quantity("1Gi")) == "Quantity(coefficient=1073741824, exponent=0, format='BinarySI')"
    assert repr(Violation("p", "m")) == (
        "Violation(current_value=None, message='m', path='p', proposed_value=None, rule='', severity='error')"
    )
    assert Quantity(1000, 0) == Quantity(1, 3)  # Quantity keeps its own numeric equality
