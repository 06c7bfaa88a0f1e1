"""A byte quantity as a person reads it: ``98.25Gi`` rather than ``100608Mi``.

The rule: the largest binary unit (``Ki``, ``Mi``, ``Gi``, ``Ti``, ``Pi``, ``Ei``) in which the value
is at least 1 and exact with at most two decimals (``262400Mi`` as ``256.25Gi``); where Kubernetes'
canonical form (``Quantity.String()``) is shorter (``16G``, not ``15625000Ki``), the canonical
form. Every text is exact, and itself a quantity the API server reads as the same value. Only for
resources counted in bytes (``memory``, ``ephemeral-storage``, ``storage``, ``hugepages-*``); any
other (``cpu``, a GPU) keeps its canonical form.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Final

from .quantity import Quantity, parse_quantity

_BINARY_UNITS: Final = (("Ei", 2**60), ("Pi", 2**50), ("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10))
_BYTE_RESOURCES: Final = frozenset({"memory", "ephemeral-storage", "storage"})
# Past these a value is no size a pod asks for: shown as Kubernetes prints it, without arithmetic on it.
_MAX_EXPONENT: Final = 30
_MAX_DIGITS: Final = 40
# apimachinery reads a binary-suffixed quantity past int64 as int64's maximum (``16000Pi`` is not
# 16000 Pi: tests/test_pr_report.py found it); the canonical form of such a value keeps it exact.
_INT64_LIMIT: Final = 2**63


def counts_bytes(resource: str) -> bool:
    return resource in _BYTE_RESOURCES or resource.startswith("hugepages-")


def readable(resource: str, quantity: Quantity) -> str:
    """``quantity`` of ``resource`` as the module's rule writes it."""
    if not counts_bytes(resource) or quantity.is_zero() or quantity.is_negative():
        return quantity.canonical()
    canonical = _exact_canonical(quantity)
    if abs(quantity.exponent) > _MAX_EXPONENT or len(str(quantity.coefficient)) > _MAX_DIGITS:
        return canonical
    value = Fraction(quantity.coefficient) * Fraction(10) ** quantity.exponent
    if value >= _INT64_LIMIT:
        return canonical
    for suffix, size in _BINARY_UNITS:
        amount = value / size
        if amount >= 1 and (amount * 100).denominator == 1:
            text = _decimal(amount) + suffix
            return text if len(text) <= len(canonical) else canonical
    return canonical


def _exact_canonical(quantity: Quantity) -> str:
    """Kubernetes' form where it reads back as the same value, else the exponent form (``25e21``):
    apimachinery has no suffix for 10^21 and beyond, and prints ``25000000000000000M`` as ``25``
    (``Quantity.String()``, apimachinery v0.36.3, run; tests/test_pr_report.py found it)."""
    canonical = quantity.canonical()
    if parse_quantity(canonical) == quantity:
        return canonical
    return Quantity(quantity.coefficient, quantity.exponent, "DecimalExponent").canonical()


def _decimal(amount: Fraction) -> str:
    """An amount with at most two decimals, without trailing zeros: ``98.25``, ``390.5``, ``1029``."""
    hundredths = int(amount * 100)
    whole, rest = divmod(hundredths, 100)
    return str(whole) if rest == 0 else f"{whole}.{rest:02d}".rstrip("0")
