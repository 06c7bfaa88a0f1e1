"""The functionConfig: none, a ConfigMap's ``data``, or a typed ``TrainJobResources`` object.

A ConfigMap's values are strings, so the structured policy options also accept a string: a JSON
object or ``name=quantity,name=quantity`` for ``maxPerContainer``, a JSON array or
``name,name`` for ``allowedResources`` and ``gpuResources`` (the typed object accepts both forms).
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError
from pydantic.alias_generators import to_camel

from . import fieldpath
from .quantity import QuantityError, invalid, parse_quantity
from .violations import Violation

CONFIG_API_VERSION = "fn.trainjob-resources.io/v1alpha1"
CONFIG_KIND = "TrainJobResources"
DEFAULT_GPU_RESOURCES = ("nvidia.com/gpu", "nvidia.com/mig-*", "amd.com/gpu", "gpu.intel.com/*")
_MAP_OPTIONS = ("maxPerContainer",)
_LIST_OPTIONS = ("allowedResources", "gpuResources")
_SEPARATORS = re.compile(r"[,\s]+")


class FunctionConfig(BaseModel):
    # Most renders have no functionConfig: its validator is built only when there is one.
    model_config = ConfigDict(
        extra="forbid", alias_generator=to_camel, populate_by_name=True, frozen=True, defer_build=True
    )

    mode: Literal["materialize", "native"] = "materialize"
    derived_runtime_kind: Literal["TrainingRuntime", "ClusterTrainingRuntime"] = "TrainingRuntime"
    trainer_resources: Literal["error", "moveToResourcesPerNode"] = "error"
    # Platform and namespace policy (policy.py).
    namespace_policy: Literal["error", "warning", "off"] = "error"
    max_per_container: dict[str, str] = {}  # resource name -> canonical quantity
    allowed_resources: tuple[str, ...] | None = None
    allow_gpu_in_sidecars: bool = True
    gpu_resources: tuple[str, ...] = DEFAULT_GPU_RESOURCES
    # Which results to report (reporting.py): every one, or only warnings and errors, plus one
    # info that sums up the run ("summary").
    results: Literal["all", "summary", "problems"] = "all"

    def is_gpu(self, resource: str) -> bool:
        """Whether ``gpuResources`` names ``resource`` (an entry ending in ``*`` is a prefix)."""
        return any(resource.startswith(p[:-1]) if p.endswith("*") else resource == p for p in self.gpu_resources)


class ConfigError(ValueError):
    def __init__(self, violations: list[Violation]) -> None:
        super().__init__("; ".join(f"{v.path}: {v.message}" for v in violations))
        self.violations = violations


def parse_config(value: Any) -> FunctionConfig:
    """The FunctionConfig a functionConfig object asks for; ConfigError names every bad field."""
    if value is None:
        return FunctionConfig.model_construct()  # the defaults, exactly what FunctionConfig() holds
    if not isinstance(value, dict):
        raise ConfigError([Violation("", "functionConfig must be a mapping")])
    kind, api_version = value.get("kind"), value.get("apiVersion")
    if kind == "ConfigMap" and api_version == "v1":
        data, prefix = value.get("data") or {}, "data"
    elif kind == CONFIG_KIND and api_version == CONFIG_API_VERSION:
        data, prefix = value.get("spec") or {}, "spec"
    else:
        raise ConfigError(
            [
                Violation(
                    "kind",
                    f"functionConfig must be a v1 ConfigMap or {CONFIG_API_VERSION} {CONFIG_KIND}, "
                    f"not {api_version or '(no apiVersion)'} {kind or '(no kind)'}",
                    current_value=kind,
                )
            ]
        )
    if not isinstance(data, dict):
        raise ConfigError([Violation(prefix, "must be a mapping")])
    data, violations = _decode_policy_options(data, prefix)
    try:
        config = FunctionConfig.model_validate(data)
    except ValidationError as err:
        for detail in err.errors(include_url=False):
            loc = ".".join(str(p) for p in detail["loc"])
            if detail["type"] == "extra_forbidden":
                accepted = ", ".join(to_camel(n) for n in FunctionConfig.model_fields)
                message = f"unknown option {loc!r}; accepted: {accepted}"
            else:
                message = detail["msg"]
            violations.append(Violation(f"{prefix}.{loc}", message, current_value=detail.get("input")))
        raise ConfigError(violations) from None
    if violations:
        raise ConfigError(violations)
    return config


def _decode_policy_options(data: dict[str, Any], prefix: str) -> tuple[dict[str, Any], list[Violation]]:
    """The structured options decoded from their string forms, quantities checked and made canonical."""
    out = dict(data)
    violations: list[Violation] = []
    for key in _MAP_OPTIONS:
        value = out.get(key)
        path = f"{prefix}.{key}"
        if isinstance(value, str):
            try:
                value = _decode_map(value)
            except ValueError as err:
                violations.append(Violation(path, str(err), current_value=out[key]))
                out.pop(key)
                continue
        if not isinstance(value, dict):
            continue
        quantities: dict[str, str] = {}
        for name, raw in value.items():
            try:
                quantity = parse_quantity(raw)
            except QuantityError as err:
                message, fix = invalid(raw, err)
                violations.append(Violation(fieldpath.child(path, str(name)), message, "error", raw, fix))
                continue
            if quantity.is_negative():
                violations.append(
                    Violation(fieldpath.child(path, str(name)), "must not be negative", current_value=raw)
                )
                continue
            quantities[str(name)] = quantity.canonical()
        out[key] = quantities
    for key in _LIST_OPTIONS:
        value = out.get(key)
        if isinstance(value, str):
            try:
                out[key] = _decode_list(value)
            except ValueError as err:
                violations.append(Violation(f"{prefix}.{key}", str(err), current_value=value))
                out.pop(key)
    return out, violations


def _decode_map(text: str) -> Any:
    if text.lstrip().startswith("{"):
        return _json(text, "a JSON object")
    out: dict[str, str] = {}
    for entry in filter(None, _SEPARATORS.split(text.strip())):
        name, sep, quantity = entry.partition("=")
        if not sep or not name:
            raise ValueError(f"expected name=quantity entries separated by commas (or a JSON object), got {entry!r}")
        out[name] = quantity
    return out


def _decode_list(text: str) -> Any:
    if text.lstrip().startswith("["):
        return _json(text, "a JSON array")
    return [entry for entry in _SEPARATORS.split(text.strip()) if entry]


def _json(text: str, what: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        raise ValueError(f"not {what}: {err}") from None
