"""A structural check of an object against a CRD's openAPIV3Schema: the fields a real API server
would prune or reject (undeclared fields, wrong types, missing required fields)."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import yaml

SHARED = Path(__file__).resolve().parents[2] / "shared" / "kubeflow-trainer"
CRD_FILES = {
    "TrainJob": "trainer.kubeflow.org_trainjobs.yaml",
    "TrainingRuntime": "trainer.kubeflow.org_trainingruntimes.yaml",
    "ClusterTrainingRuntime": "trainer.kubeflow.org_clustertrainingruntimes.yaml",
}


@cache
def schema_for(kind: str) -> dict[str, Any]:
    crd = yaml.load((SHARED / "crds" / CRD_FILES[kind]).read_text(), Loader=yaml.CSafeLoader)
    version = next(v for v in crd["spec"]["versions"] if v.get("storage", True))
    schema: dict[str, Any] = version["schema"]["openAPIV3Schema"]
    return schema


def problems(obj: Any, kind: str | None = None) -> list[str]:
    """Every place where ``obj`` does not fit its kind's schema; empty when it fits."""
    out: list[str] = []
    _check(obj, schema_for(kind or obj["kind"]), "", out)
    return out


def _check(value: Any, schema: dict[str, Any], path: str, out: list[str]) -> None:
    if value is None:
        if not schema.get("nullable"):
            out.append(f"{path}: null is not allowed")
        return
    if schema.get("x-kubernetes-int-or-string"):
        if not isinstance(value, int | str) or isinstance(value, bool):
            out.append(f"{path}: must be an integer or a string, got {type(value).__name__}")
        return
    kind = schema.get("type")
    if kind == "object":
        if not isinstance(value, dict):
            out.append(f"{path}: must be an object")
            return
        properties = schema.get("properties")
        for key in schema.get("required", []):
            if key not in value:
                out.append(f"{path}.{key}: required field is missing")
        for key, item in value.items():
            child = f"{path}.{key}" if path else key
            if properties is not None and key in properties:
                _check(item, properties[key], child, out)
            elif isinstance(schema.get("additionalProperties"), dict):
                _check(item, schema["additionalProperties"], child, out)
            elif properties is not None and not schema.get("x-kubernetes-preserve-unknown-fields"):
                out.append(f"{child}: field not declared in the schema (the API server drops or rejects it)")
    elif kind == "array":
        if not isinstance(value, list):
            out.append(f"{path}: must be an array")
            return
        for i, item in enumerate(value):
            _check(item, schema.get("items", {}), f"{path}[{i}]", out)
    elif kind == "string" and not isinstance(value, str):
        out.append(f"{path}: must be a string, got {type(value).__name__}")
    elif kind == "integer" and (not isinstance(value, int) or isinstance(value, bool)):
        out.append(f"{path}: must be an integer")
    elif kind == "boolean" and not isinstance(value, bool):
        out.append(f"{path}: must be a boolean")
    elif kind == "number" and (not isinstance(value, int | float) or isinstance(value, bool)):
        out.append(f"{path}: must be a number")
