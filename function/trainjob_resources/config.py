"""The functionConfig: none, a ConfigMap's ``data``, or a typed ``TrainJobResources`` object."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError
from pydantic.alias_generators import to_camel

from .violations import Violation

CONFIG_API_VERSION = "fn.trainjob-resources.io/v1alpha1"
CONFIG_KIND = "TrainJobResources"


class FunctionConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", alias_generator=to_camel, populate_by_name=True, frozen=True)

    mode: Literal["materialize", "native"] = "materialize"
    derived_runtime_kind: Literal["TrainingRuntime", "ClusterTrainingRuntime"] = "TrainingRuntime"
    trainer_resources: Literal["error", "moveToResourcesPerNode"] = "error"


class ConfigError(ValueError):
    def __init__(self, violations: list[Violation]) -> None:
        super().__init__("; ".join(f"{v.path}: {v.message}" for v in violations))
        self.violations = violations


def parse_config(value: Any) -> FunctionConfig:
    """The FunctionConfig a functionConfig object asks for; ConfigError names every bad field."""
    if value is None:
        return FunctionConfig()
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
                    f"not {api_version} {kind}",
                    current_value=kind,
                )
            ]
        )
    if not isinstance(data, dict):
        raise ConfigError([Violation(prefix, "must be a mapping")])
    try:
        return FunctionConfig.model_validate(data)
    except ValidationError as err:
        violations = []
        for detail in err.errors(include_url=False):
            loc = ".".join(str(p) for p in detail["loc"])
            if detail["type"] == "extra_forbidden":
                accepted = ", ".join(to_camel(n) for n in FunctionConfig.model_fields)
                message = f"unknown option {loc!r}; accepted: {accepted}"
            else:
                message = detail["msg"]
            violations.append(Violation(f"{prefix}.{loc}", message, current_value=detail.get("input")))
        raise ConfigError(violations) from None
