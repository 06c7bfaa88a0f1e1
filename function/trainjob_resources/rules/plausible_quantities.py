"""Quantities Kubernetes accepts that are almost surely not what was meant, as Kubernetes' own
documentation warns (kubernetes/website ``content/en/docs/concepts/configuration/manage-resources-containers.md``:
"If you request 400m of memory, this is a request for 0.4 bytes"; "Kubernetes doesn't allow you to
specify CPU resources with a precision finer than 1m": the API server accepts ``100u`` all the same,
and what reads cpu takes ``Quantity.MilliValue``, which rounds up to 1m, apimachinery
``pkg/api/resource/quantity.go``): a memory or ephemeral-storage below 1Mi, a cpu below 1m, and a
cpu of 100 cores or more written without a unit. Warnings, at the field that
says it, naming the value and the likely intent. Only what the TrainJob writes (its ContainerPatches
and ``resourcesPerNode``); a value that is no quantity is ``container-site``'s error, not this."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from decimal import Decimal
from typing import Any

from ..kube.quantity import Quantity, QuantityError, parse_quantity
from ..resolve.context import TrainJobContext
from ..trainer.effective import RESOURCES_PER_NODE_PATH
from ..trainer.trainjob_view import resources_per_node
from ..values import fieldpath
from ..values.violations import Violation
from .framework import Rule
from .reads import CONTAINER_SITES, PATCHED_RESOURCES, RESOURCES_PER_NODE
from .stages import PATCHES, RUNTIME_FREE

_BYTES = ("memory", "ephemeral-storage")
_ONE_MI = Quantity(2**20)
_ONE_BYTE = Quantity(1)
_ONE_M = Quantity(1, -3)
_MANY_CORES = Quantity(100)  # more whole cpus than one container of a common node has
_SPLIT = re.compile(r"^([+-]?[0-9.]+)([a-zA-Z]*)$")  # a number and a unit suffix; no exponent form


def _check(context: TrainJobContext, _: Any) -> list[Violation]:
    out: list[Violation] = []
    for site in context.sites:
        out += _section_findings(site.resources, site.resources_path)
    # Read from the TrainJob (the runtime-free stage has no context.per_node).
    out += _section_findings(resources_per_node(context.trainjob), RESOURCES_PER_NODE_PATH)
    return out


def _section_findings(resources: Mapping[str, Any] | None, path: str) -> list[Violation]:
    out: list[Violation] = []
    for section, name, raw in _values(resources):
        message = implausible(name, raw)
        if message is not None:
            at = fieldpath.child(f"{path}.{section}", name)
            out.append(Violation(at, message, "warning", current_value=raw))
    return out


def _values(resources: Mapping[str, Any] | None) -> Iterator[tuple[str, str, Any]]:
    for section in ("requests", "limits"):
        values = resources.get(section) if isinstance(resources, Mapping) else None
        for name, raw in values.items() if isinstance(values, Mapping) else ():
            if isinstance(name, str) and (isinstance(raw, (int, float, str)) and not isinstance(raw, bool)):
                yield section, name, raw


def implausible(name: str, raw: int | float | str) -> str | None:
    """Why ``name: raw`` is almost surely not what was meant, and what likely was; None when it is plausible."""
    try:
        quantity = parse_quantity(raw)
    except QuantityError:
        return None
    if quantity.is_zero() or quantity.is_negative():
        return None
    text = raw.strip() if isinstance(raw, str) else str(raw)
    split = _SPLIT.match(text)
    number, suffix = (split.group(1), split.group(2)) if split else (None, None)
    if name in _BYTES and quantity < _ONE_MI:
        why = {"": "", "m": " (m is milli: a thousandth)"}.get(suffix or "", ", below 1Mi") if number else ", below 1Mi"
        unit = "Gi" if suffix == "" and quantity < _ONE_BYTE else "Mi"  # 0.5: half a gibibyte
        intent = f"did you mean {number}{unit}?" if number else "did you mean a unit such as Mi or Gi?"
        return f"{name}: {text} is {_decimal(quantity)} bytes{why}; {intent}"
    if name == "cpu" and quantity < _ONE_M:
        intent = f"did you mean {number}m?" if number and suffix in ("n", "u") else "write 1m if that is what is meant"
        return (
            f"cpu: {text} is {_decimal(quantity)} of a cpu, below 1m: Kubernetes counts cpu in millicores "
            f"and rounds it up to 1m; {intent}"
        )
    if name == "cpu" and number and suffix == "" and quantity.is_integer() and quantity >= _MANY_CORES:
        return f"cpu: {text} is {text} whole cpus (cores); did you mean {number}m?"
    return None


def _decimal(quantity: Quantity) -> str:
    value = Decimal(quantity.coefficient).scaleb(quantity.exponent)
    return f"{value.normalize():f}"


RULE = Rule(
    "plausible-quantities",
    (RUNTIME_FREE, PATCHES),
    "trainjob",
    (CONTAINER_SITES, PATCHED_RESOURCES, RESOURCES_PER_NODE),
    "quantities almost surely not meant: memory below 1Mi, cpu below 1m, cpu cores written without a unit",
    _check,
)
