"""The namespace's LimitRanges and ResourceQuotas as the policy rules read them
(``limit_range.py``, ``resource_quota.py``): a LimitRange's Container items defaulted as the API
server does (``SetDefaults_LimitRangeItem``, pkg/apis/core/v1/defaults.go), a quota's ``hard``
and its scopes (``scopes`` and ``scopeSelector``). An object that cannot be read is named and not
checked (``Unreadable``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from ..krm.resource_list import Item
from ..kube.podmath import Quantities
from ..kube.quantity import QuantityError, parse_quantity
from ..report.explain import ContainerDefaults
from ..values.records import Record

LIMIT_RANGE = "LimitRange"
RESOURCE_QUOTA = "ResourceQuota"


class Unreadable(ValueError):
    pass


class LimitItem(Record):
    __slots__ = ("default", "default_request", "max", "max_limit_request_ratio", "min", "origins", "type")

    def __init__(
        self,
        type: str,
        min: Quantities,
        max: Quantities,
        max_limit_request_ratio: Quantities,
        default: Quantities,
        default_request: Quantities,
    ) -> None:
        """``default`` and ``default_request`` as written: a Container item is defaulted here as the
        API server does (``SetDefaults_LimitRangeItem``, pkg/apis/core/v1/defaults.go)."""
        self.type: Final = type
        self.min: Final = min
        self.max: Final = max
        self.max_limit_request_ratio: Final = max_limit_request_ratio
        # (section, resource) -> the field the defaulting took a default from, where it is not the
        # default's own field: "max" (a limit, or a request through it), "min", "default".
        self.origins: Final = _default_origins(min, max, default, default_request) if type == "Container" else {}
        if type == "Container":
            default = {**max, **default}
            default_request = {**min, **default, **default_request}
        self.default: Final = default
        self.default_request: Final = default_request


class LimitRange(Record):
    __slots__ = ("display", "items")

    def __init__(self, display: str, items: tuple[LimitItem, ...]) -> None:
        self.display: Final = display
        self.items: Final = items

    def container_defaults(self) -> ContainerDefaults:
        """The LimitRanger's ``defaultContainerResourceRequirements``: later Container items win per key."""
        requests: Quantities = {}
        limits: Quantities = {}
        origins: dict[tuple[str, str], str] = {}
        for item in self.items:
            if item.type == "Container":
                requests.update(item.default_request)
                limits.update(item.default)
                for section, values in (("requests", item.default_request), ("limits", item.default)):
                    for name in values:
                        origin = item.origins.get((section, name))
                        if origin is None:
                            origins.pop((section, name), None)
                        else:
                            origins[(section, name)] = origin
        return ContainerDefaults(self.display, requests, limits, origins)


class ScopeRequirement(Record):
    __slots__ = ("operator", "scope", "values")

    def __init__(self, scope: str, operator: str, values: tuple[str, ...] = ()) -> None:
        self.scope: Final = scope
        self.operator: Final = operator
        self.values: Final = values


class Quota(Record):
    __slots__ = ("display", "hard", "scopes")

    def __init__(self, display: str, hard: Quantities, scopes: tuple[ScopeRequirement, ...]) -> None:
        self.display: Final = display
        self.hard: Final = hard
        self.scopes: Final = scopes


def read_limit_range(item: Item) -> LimitRange:
    """A LimitRange with the API server's defaulting of its Container items (``SetDefaults_LimitRangeItem``)."""
    spec = item.value().get("spec")
    entries = spec.get("limits") if isinstance(spec, Mapping) else None
    if not isinstance(entries, list):
        raise Unreadable("spec.limits must be a list")
    items: list[LimitItem] = []
    for i, entry in enumerate(entries):
        if not isinstance(entry, Mapping) or not isinstance(entry.get("type"), str):
            raise Unreadable(f"spec.limits[{i}] must be a mapping with a type")
        where = f"spec.limits[{i}]"
        parsed = {
            key: _resource_list(entry.get(key), f"{where}.{key}")
            for key in ("min", "max", "maxLimitRequestRatio", "default", "defaultRequest")
        }
        items.append(
            LimitItem(
                entry["type"],
                parsed["min"],
                parsed["max"],
                parsed["maxLimitRequestRatio"],
                parsed["default"],
                parsed["defaultRequest"],
            )
        )
    return LimitRange(item.ref.display(), tuple(items))


def _default_origins(
    minimum: Quantities, maximum: Quantities, default: Quantities, default_request: Quantities
) -> dict[tuple[str, str], str]:
    """Where ``SetDefaults_LimitRangeItem`` (pkg/apis/core/v1/defaults.go) takes each default it fills
    in: an unset ``default`` from ``max``; an unset ``defaultRequest`` from ``default`` (itself
    perhaps from ``max``), else from ``min``."""
    out: dict[tuple[str, str], str] = {}
    for name in maximum:
        if name not in default:
            out[("limits", name)] = "max"
    for name in {**minimum, **maximum, **default}:
        if name in default_request:
            continue
        if name in default:
            out[("requests", name)] = "default"
        elif name in maximum:
            out[("requests", name)] = "max"
        else:
            out[("requests", name)] = "min"
    return out


def read_quota(item: Item) -> Quota:
    spec = item.value().get("spec")
    if not isinstance(spec, Mapping):
        raise Unreadable("spec must be a mapping")
    hard = _resource_list(spec.get("hard"), "spec.hard")
    listed = spec.get("scopes")
    if listed is not None and not isinstance(listed, list):
        raise Unreadable("spec.scopes must be a list")
    scopes = [ScopeRequirement(str(s), "Exists") for s in listed or []]
    selector = spec.get("scopeSelector")
    expressions = selector.get("matchExpressions") if isinstance(selector, Mapping) else None
    if expressions is not None and not isinstance(expressions, list):
        raise Unreadable("spec.scopeSelector.matchExpressions must be a list")
    for expression in expressions or []:
        values = expression.get("values") if isinstance(expression, Mapping) else None
        if not isinstance(expression, Mapping) or not isinstance(values or [], list):
            raise Unreadable("spec.scopeSelector.matchExpressions must hold mappings with a list of values")
        values = tuple(str(v) for v in values or [])
        scopes.append(ScopeRequirement(str(expression.get("scopeName")), str(expression.get("operator")), values))
    return Quota(item.ref.display(), hard, tuple(scopes))


def _resource_list(value: Any, where: str) -> Quantities:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise Unreadable(f"{where} must be a mapping")
    out: Quantities = {}
    for name, raw in value.items():
        try:
            out[str(name)] = parse_quantity(raw)
        except QuantityError as err:
            raise Unreadable(f"{where}.{name}: {err}") from None
    return out
