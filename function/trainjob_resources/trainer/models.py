"""Pydantic models of exactly the Kubeflow Trainer API this function reads.

The runtimePatches tree follows the TrainJob API (kubeflow/trainer
``pkg/apis/trainer/v1alpha1/trainjob_types.go``, ``RuntimePatch`` down to ``ContainerPatch``, and
its CRD ``manifests/base/crds/trainer.kubeflow.org_trainjobs.yaml``) field for field and forbids
anything else, with two additions, both KEP-2782's (kubeflow/trainer ``proposals/2782-dra-support``):
``ContainerPatch.resources`` and ``PodSpecPatch.resourceClaims``. The CRD's limits (MaxItems,
lengths, list keys) are the ``crd`` rule's (``rules/crd.py``). Runtimes are read by ``runtime_view`` (with
``runtime_models`` for the unusual ones).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.alias_generators import to_camel

from ..values import fieldpath
from ..values.violations import Violation
from .api import TRAINER_GROUP


# Field names are the API's, in snake case; the camelCase aliases are generated. Only the root
# model that validates needs a validator, and it holds the nested models' schemas: building one
# per class at import would cost start-up time on every render (``defer_build``).
class _Strict(BaseModel):
    model_config = ConfigDict(
        extra="forbid", alias_generator=to_camel, populate_by_name=True, frozen=True, defer_build=True
    )


class _Open(BaseModel):
    model_config = ConfigDict(
        extra="allow", alias_generator=to_camel, populate_by_name=True, frozen=True, defer_build=True
    )


class ObjectMetaPatch(_Strict):
    annotations: dict[str, str] | None = None
    labels: dict[str, str] | None = None
    finalizers: list[str] | None = None
    name: str | None = None
    namespace: str | None = None


class ResourceClaim(_Strict):
    name: str
    request: str | None = None


class ResourceRequirementsPatch(_Strict):
    """Kubernetes ResourceRequirements; a ``null`` quantity deletes that key when merged."""

    limits: dict[str, Any] | None = None
    requests: dict[str, Any] | None = None
    claims: list[ResourceClaim] | None = None


class ContainerPatch(_Strict):
    name: str
    env: list[Any] | None = None
    volume_mounts: list[Any] | None = None
    security_context: dict[str, Any] | None = None
    resources: ResourceRequirementsPatch | None = Field(
        None,
        description="trainjob-resources: the container's requests and limits (not in upstream's API: the function "
        "moves them into a derived runtime)",
    )


class PodSpecPatch(_Strict):
    affinity: dict[str, Any] | None = None
    containers: list[ContainerPatch] | None = None
    image_pull_secrets: list[Any] | None = None
    init_containers: list[ContainerPatch] | None = None
    node_selector: dict[str, str] | None = None
    resource_claims: list[Any] | None = Field(
        None,
        description="KEP-2782's pod-level claims (no release serves them yet): mode native only (rules/pod_claims.py)",
    )
    scheduling_gates: list[Any] | None = None
    security_context: dict[str, Any] | None = None
    service_account_name: str | None = None
    termination_grace_period_seconds: int | None = None
    tolerations: list[Any] | None = None
    volumes: list[Any] | None = None


class PodTemplatePatch(_Strict):
    metadata: ObjectMetaPatch | None = None
    spec: PodSpecPatch | None = None


class JobSpecPatch(_Strict):
    template: PodTemplatePatch | None = None


class JobTemplatePatch(_Strict):
    metadata: ObjectMetaPatch | None = None
    spec: JobSpecPatch | None = None


class ReplicatedJobPatch(_Strict):
    name: str
    template: JobTemplatePatch | None = None


class JobSetSpecPatch(_Strict):
    replicated_jobs: list[ReplicatedJobPatch] | None = None


class JobSetTemplatePatch(_Strict):
    metadata: ObjectMetaPatch | None = None
    spec: JobSetSpecPatch | None = None


class TrainingRuntimeSpecPatch(_Strict):
    template: JobSetTemplatePatch | None = None


class RuntimePatch(_Strict):
    manager: str
    time: str | None = None
    training_runtime_spec: TrainingRuntimeSpecPatch | None = None


class RuntimeRef(_Strict):
    name: str
    api_group: str | None = None
    kind: str | None = None


class Trainer(_Open):
    num_nodes: int | None = None
    resources_per_node: ResourceRequirementsPatch | None = None


class TrainJobSpec(_Strict):
    runtime_ref: RuntimeRef
    trainer: Trainer | None = None
    runtime_patches: list[RuntimePatch] | None = None
    active_deadline_seconds: Any = None
    initializer: Any = None
    managed_by: Any = None
    suspend: Any = None


class ObjectMeta(_Open):
    name: str = ""
    namespace: str = ""


class TrainJob(_Open):
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    spec: TrainJobSpec


# The JSON Schema of what this function accepts (``trainjob-resources schema trainjob``).

JSON_SCHEMA_DRAFT = "http://json-schema.org/draft-07/schema#"  # what yaml-language-server and kubeconform read
# A quantity as the CRDs of Kubernetes-style APIs declare it: an integer or a string of this pattern
# (controller-tools pkg/crd/known_types.go, resource.Quantity: int-or-string), here also any number
# (the function reads 0.5 as Kubernetes' JSON decoding does) and null (a patch deletes that key).
QUANTITY_PATTERN = (
    r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$"
)
QUANTITY_SCHEMA: dict[str, Any] = {
    "anyOf": [{"type": "number"}, {"type": "string", "pattern": QUANTITY_PATTERN}, {"type": "null"}],
    "description": "a quantity (e.g. 64Gi, 500m, 2), or null to delete the key",
}


def json_schema(model: type[BaseModel]) -> dict[str, Any]:
    """``model``'s JSON Schema, draft-07, every nested model inlined (none is recursive) so that a
    nullable one is ``type: [object, "null"]``, not an ``anyOf`` whose errors point at the
    ``anyOf``; without pydantic's generated titles; ``limits`` and ``requests`` hold quantities."""
    schema = model.model_json_schema(by_alias=True)
    definitions = schema.pop("$defs", {})
    for section in ("limits", "requests"):
        properties = definitions.get(ResourceRequirementsPatch.__name__, {}).get("properties", {})
        if section in properties:
            properties[section]["anyOf"][0]["additionalProperties"] = QUANTITY_SCHEMA
    return {"$schema": JSON_SCHEMA_DRAFT, **_tidy(schema, definitions)}


def _tidy(value: Any, definitions: dict[str, Any]) -> Any:
    """``value`` with each ``$ref`` replaced by its definition (tidied), pydantic's titles left out, and
    ``anyOf: [{type: T, ...}, {type: null}]`` written ``type: [T, "null"]``."""
    if isinstance(value, list):
        return [_tidy(v, definitions) for v in value]
    if not isinstance(value, dict):
        return value
    if "$ref" in value:
        return _tidy(definitions[value["$ref"].removeprefix("#/$defs/")], definitions)
    out = {k: _tidy(v, definitions) for k, v in value.items() if not (k == "title" and isinstance(v, str))}
    alternatives = out.get("anyOf")
    if isinstance(alternatives, list) and len(alternatives) == 2 and alternatives[1] == {"type": "null"}:
        first = alternatives[0]
        if isinstance(first.get("type"), str) and "anyOf" not in first:
            del out["anyOf"]
            out = {**first, **out, "type": [first["type"], "null"]}
    return out


def trainjob_json_schema() -> dict[str, Any]:
    """The TrainJob this function reads: upstream's API (``trainjob_types.go``) with ``resources`` in
    ContainerPatch, checked as the models here check it (unknown fields of the patch tree refused)."""
    schema = json_schema(TrainJob)
    schema["description"] = (
        f"A Kubeflow Trainer TrainJob ({TRAINER_GROUP}/v1alpha1) as trainjob-resources reads it: upstream's API "
        "with resources (requests, limits, claims) in a runtimePatches ContainerPatch."
    )
    schema["properties"] = {
        "apiVersion": {"type": "string", "enum": [f"{TRAINER_GROUP}/v1alpha1"]},
        "kind": {"type": "string", "enum": ["TrainJob"]},
        **schema["properties"],
    }
    schema["required"] = ["apiVersion", "kind", *schema.get("required", [])]
    return schema


# Turning pydantic's errors into violations with field paths and helpful names.

_MISSPELLINGS = {
    "trainingRuntimeRef": "runtimeRef",
    "trainingRuntime": "runtimeRef",
    "runtime": "runtimeRef",
    "runtimePatch": "runtimePatches",
    "resource": "resources",
    "limit": "limits",
    "request": "requests",
}


def _path(loc: tuple[int | str, ...]) -> str:
    path = ""
    for part in loc:
        path = fieldpath.index(path, part) if isinstance(part, int) else fieldpath.child(path, part)
    return path


def _model_at(model: type[BaseModel], loc: tuple[int | str, ...]) -> type[BaseModel] | None:
    """The model class that holds the field at ``loc`` (for naming the fields it accepts)."""
    current: type[BaseModel] = model
    for part in loc:
        if isinstance(part, int):
            continue
        field = next((f for n, f in current.model_fields.items() if _alias(n, f.alias) == part), None)
        if field is None:
            return None
        nested = _nested_model(field.annotation)
        if nested is None:
            return None
        current = nested
    return current


def _nested_model(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in getattr(annotation, "__args__", ()):
        found = _nested_model(arg)
        if found is not None:
            return found
    return None


def _alias(name: str, alias: str | None) -> str:
    return alias or to_camel(name)


def _accepted(model: type[BaseModel]) -> list[str]:
    return [_alias(n, f.alias) for n, f in model.model_fields.items()]


def _unknown_field_message(root: type[BaseModel], loc: tuple[int | str, ...]) -> str:
    name = str(loc[-1])
    holder = _model_at(root, loc[:-1])
    if holder is None:
        return f"unknown field {name!r}"
    accepted = _accepted(holder)
    suggestion = _MISSPELLINGS.get(name)
    if suggestion not in accepted:
        import difflib  # only for an error: not worth its import on every render

        close = difflib.get_close_matches(name, accepted, n=1)
        suggestion = close[0] if close else None
    hint = f"; did you mean {suggestion!r}?" if suggestion else ""
    return f"unknown field {name!r}: {holder.__name__} accepts {', '.join(accepted)}{hint}"


def violations_from(
    error: ValidationError, root: type[BaseModel], prefix: tuple[int | str, ...] = ()
) -> list[Violation]:
    out: list[Violation] = []
    for detail in error.errors(include_url=False):
        loc = prefix + tuple(detail["loc"])
        if detail["type"] == "extra_forbidden":
            message = _unknown_field_message(root, tuple(detail["loc"]))
        elif detail["type"] == "missing":
            message = "required field is missing"
        else:
            message = detail["msg"][0].lower() + detail["msg"][1:]
        current = detail.get("input") if detail["type"] != "missing" else None
        if isinstance(current, dict | list):
            current = None
        out.append(Violation(_path(loc), message, current_value=current))
    return out


def parse_trainjob(value: Any) -> tuple[TrainJob | None, list[Violation]]:
    try:
        return TrainJob.model_validate(value), []
    except ValidationError as err:
        return None, violations_from(err, TrainJob)


def resources_per_node(trainjob: TrainJob) -> dict[str, Any] | None:
    """``spec.trainer.resourcesPerNode`` as plain data (nulls as written), or None."""
    trainer = trainjob.spec.trainer
    if trainer is None or trainer.resources_per_node is None:
        return None
    return trainer.resources_per_node.model_dump(by_alias=True, exclude_none=True, mode="python")
