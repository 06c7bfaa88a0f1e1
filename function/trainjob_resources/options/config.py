"""The functionConfig: none, a ConfigMap's ``data``, or a typed ``TrainJobResources`` object.

A ConfigMap's values are strings, so the structured policy options also accept a string: a JSON
object or ``name=quantity,name=quantity`` for ``maxPerContainer``, a JSON object or
``role.name=quantity,role.name=quantity`` for ``maxPerRole`` (a role has no dot: the first one ends
it), a JSON array or ``name,name`` for ``allowedResources`` and ``gpuResources``, a JSON object for
``derivedRuntimeMetadata`` (the typed object accepts both forms).
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError
from pydantic.alias_generators import to_camel

from ..kube.quantity import QuantityError, invalid, parse_quantity
from ..kube.resource_rules import qualified_name_errors
from ..trainer.releases import NEWEST, TrainerVersion
from ..values import fieldpath
from ..values.keys import INTERNAL_PREFIX, ORCHESTRATOR_PREFIXES, PREFIX, SYNC_WAVE
from ..values.violations import Violation
from .options import CONFIG_API_VERSION, CONFIG_KIND, DEFAULT_GPU_RESOURCES, ROLES

_MAP_OPTIONS = ("maxPerContainer",)
_METADATA = "derivedRuntimeMetadata"
_LIST_OPTIONS = ("allowedResources", "gpuResources")
_BOOLEAN_OPTIONS = ("allowGpuInSidecars",)
_SEPARATORS = re.compile(r"[,\s]+")


class FunctionConfig(BaseModel):
    # Most renders have no functionConfig: its validator is built only when there is one.
    model_config = ConfigDict(
        extra="forbid", alias_generator=to_camel, populate_by_name=True, frozen=True, defer_build=True
    )

    mode: Literal["materialize", "native"] = "materialize"
    derived_runtime_kind: Literal["TrainingRuntime", "ClusterTrainingRuntime"] = "TrainingRuntime"
    trainer_version: TrainerVersion = NEWEST  # the Kubeflow Trainer the cluster runs (trainer/releases.py)
    trainer_resources: Literal["error", "moveToResourcesPerNode"] = "error"
    # Platform and namespace policy (policy.py).
    namespace_policy: Literal["error", "warning", "off"] = "error"
    max_per_container: dict[str, str] = {}  # resource name -> canonical quantity
    max_per_role: dict[str, dict[str, str]] = {}  # role (options.ROLES) -> resource name -> canonical quantity
    allowed_resources: tuple[str, ...] | None = None
    allow_gpu_in_sidecars: bool = True
    gpu_resources: tuple[str, ...] = DEFAULT_GPU_RESOURCES
    # Labels and annotations every derived runtime gets (materialize.add_metadata), after the base's
    # are filtered: e.g. argocd.argoproj.io/sync-options: Prune=false.
    derived_runtime_metadata: dict[str, dict[str, str]] = {}  # "annotations", "labels" (metadata_violations)
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
    snake = [
        key for key in data if isinstance(key, str) and key != to_camel(key) and key in FunctionConfig.model_fields
    ]
    if snake:
        # pydantic would take a field's Python name too (populate_by_name), the string forms of the
        # policy options would not be decoded, and ``render``'s layers would not see the option at all:
        # options are spelled one way, everywhere.
        raise ConfigError(
            [Violation(f"{prefix}.{key}", f"unknown option {key!r}; did you mean {to_camel(key)!r}?") for key in snake]
        )
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
        if isinstance(value, dict):
            out[key] = _quantities(value, path, violations)
    if "maxPerRole" in out:
        before = len(violations)
        out["maxPerRole"] = _decode_roles(out["maxPerRole"], f"{prefix}.maxPerRole", violations)
        if len(violations) > before:
            out.pop("maxPerRole")  # named already: pydantic would name it again
    for key in _BOOLEAN_OPTIONS:
        value = out.get(key)
        if key not in out or isinstance(value, bool):
            continue
        # The docs promise true/false; pydantic alone would also take "no", "off", "n", 0 and 1.
        if isinstance(value, str) and value in ("true", "false"):
            out[key] = value == "true"
        else:
            violations.append(
                Violation(f"{prefix}.{key}", f"must be true or false, got {value!r}", current_value=value)
            )
            out.pop(key)
    for key in _LIST_OPTIONS:
        value = out.get(key)
        if isinstance(value, str):
            try:
                out[key] = _decode_list(value)
            except ValueError as err:
                violations.append(Violation(f"{prefix}.{key}", str(err), current_value=value))
                out.pop(key)
    value = out.get(_METADATA)
    if isinstance(value, str):
        try:
            out[_METADATA] = value = _json(value, "a JSON object")
        except ValueError as err:
            violations.append(Violation(f"{prefix}.{_METADATA}", str(err), current_value=value))
            out.pop(_METADATA)
            value = None
    if isinstance(value, dict):
        found = metadata_violations(value, f"{prefix}.{_METADATA}")
        if found:
            violations += found
            out.pop(_METADATA)
    return out, violations


def _quantities(value: dict[Any, Any], path: str, violations: list[Violation]) -> dict[str, str]:
    """A map of maxima, each checked and made canonical; the bad ones named in ``violations``."""
    quantities: dict[str, str] = {}
    for name, raw in value.items():
        try:
            quantity = parse_quantity(raw)
        except QuantityError as err:
            message, fix = invalid(raw, err)
            violations.append(Violation(fieldpath.child(path, str(name)), message, "error", raw, fix))
            continue
        if quantity.is_negative():
            violations.append(Violation(fieldpath.child(path, str(name)), "must not be negative", current_value=raw))
            continue
        quantities[str(name)] = quantity.canonical()
    return quantities


def _decode_roles(value: Any, path: str, violations: list[Violation]) -> Any:
    """``maxPerRole``: role -> maxima, from a mapping or its string forms; what cannot be read is
    named in ``violations``."""
    if isinstance(value, str):
        try:
            value = _decode_role_map(value)
        except ValueError as err:
            violations.append(Violation(path, str(err), current_value=value))
            return value
    if not isinstance(value, dict):
        return value  # pydantic names the type
    roles: dict[str, dict[str, str]] = {}
    for role, maxima in value.items():
        where = fieldpath.child(path, str(role))
        if role not in ROLES:
            violations.append(
                Violation(where, f"unknown role {role!r}; accepted: {', '.join(ROLES)}", current_value=role)
            )
        elif not isinstance(maxima, dict):
            violations.append(
                Violation(where, "must be a mapping of resource names to quantities", current_value=maxima)
            )
        else:
            roles[role] = _quantities(maxima, where, violations)
    return roles


def _decode_role_map(text: str) -> Any:
    if text.lstrip().startswith("{"):
        return _json(text, "a JSON object")
    out: dict[str, dict[str, str]] = {}
    for entry in filter(None, _SEPARATORS.split(text.strip())):
        key, sep, quantity = entry.partition("=")
        role, dot, name = key.partition(".")
        if not sep or not dot or not role or not name:
            raise ValueError(
                f"expected role.name=quantity entries separated by commas (or a JSON object), got {entry!r}"
            )
        out.setdefault(role, {})[name] = quantity
    return out


# Keys the function writes on every derived runtime itself, or drops from it on purpose
# (materialize.py: upstream's runtime guide, docs/operator-guides/runtime.md, says a runtime you
# create must omit webhook-validation), and the orchestrators' own.
_RESERVED_METADATA = (
    PREFIX,
    "trainjob-resources.io/",
    INTERNAL_PREFIX,
    SYNC_WAVE,
    "trainer.kubeflow.org/webhook-validation",
    *ORCHESTRATOR_PREFIXES,
)
# apimachinery pkg/util/validation/validation.go: IsValidLabelValue
_LABEL_VALUE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")
_LABEL_VALUE_MESSAGE = (
    "a label value must be 63 characters or less, empty or alphanumeric at both ends, with '-', '_' or '.' between"
)


def metadata_violations(value: dict[Any, Any], path: str) -> list[Violation]:
    """What the API server refuses of ``derivedRuntimeMetadata``'s keys and values (apimachinery
    ``ValidateLabels``, ``ValidateAnnotations``: qualified names; label values of at most 63
    characters), and the keys the function keeps for itself."""
    out: list[Violation] = []
    for section, entries in value.items():
        where = fieldpath.child(path, str(section))
        if section not in ("annotations", "labels"):
            out.append(Violation(where, "unknown key; accepted: annotations, labels", current_value=section))
            continue
        if not isinstance(entries, dict):
            continue  # the model says what is wrong with it
        for key, text in entries.items():
            at = fieldpath.child(where, str(key))
            problems = qualified_name_errors(key) if isinstance(key, str) else ["must be a string"]
            if isinstance(key, str) and key.startswith(_RESERVED_METADATA):
                problems.append("is set (or dropped) by the function itself on every derived runtime")
            out += [Violation(at, problem, current_value=key) for problem in problems]
            if section == "labels" and isinstance(text, str) and (len(text) > 63 or not _LABEL_VALUE.fullmatch(text)):
                out.append(Violation(at, _LABEL_VALUE_MESSAGE, current_value=text))
    return out


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


# The JSON Schema of a TrainJobResources object (``trainjob-resources schema config``).

_DESCRIPTIONS = {
    "mode": "materialize (default): derived runtimes the API accepts; native: validate only",
    "derivedRuntimeKind": "the kind of the derived runtimes",
    "trainerVersion": "the Kubeflow Trainer release the cluster runs (v2.2 or v2.3; default the newest)",
    "trainerResources": "resources on the trainer container: an error, or moved to spec.trainer.resourcesPerNode",
    "namespacePolicy": "how LimitRange and ResourceQuota findings are reported",
    "maxPerContainer": "the largest request or limit of any one container, per resource name",
    "maxPerRole": f"the largest request or limit per role ({', '.join(ROLES)}), per resource name",
    "allowedResources": "the only resource names containers may request or limit",
    "allowGpuInSidecars": "false: no initContainers entry may request or limit a GPU",
    "gpuResources": "what counts as a GPU (an entry ending in * is a prefix)",
    "derivedRuntimeMetadata": "labels and annotations every derived runtime gets (annotations, labels)",
    "results": "which results to report",
}
# What each value of an option with a few choices does: docs/config.md's option table is written from
# FunctionConfig, these and ``_DESCRIPTIONS`` (tests/options_doc.py); an option not here is one row.
VALUE_MEANINGS: dict[str, dict[str, str]] = {
    "mode": {
        "materialize": "validate, then write derived runtimes and rewrite TrainJobs",
        "native": "for a Trainer whose TrainJob CRD has KEP-2782's fields (no release yet): validate with the "
        "KEP's rules, keep patches as written, derive nothing ([Native mode](#native-mode-kep-2782))",
    },
    "derivedRuntimeKind": {
        "TrainingRuntime": "derived runtimes are namespaced, in the TrainJob's namespace: tenants need no "
        "cluster-scope rights",
        "ClusterTrainingRuntime": "one cluster-scoped derived runtime per distinct override, only from a runtime "
        "the platform supplies",
    },
    "trainerResources": {
        "error": "`resources` on the trainer container (`node`) is an error whose `proposedValue` is the "
        "equivalent `spec.trainer.resourcesPerNode`",
        "moveToResourcesPerNode": "move it there (an existing `resourcesPerNode` wins per key); refused where "
        "upstream would size other containers, drop claims or change the trainer",
    },
    "results": {
        "all": "every result: errors, warnings, and one or two infos per TrainJob (its totals, what was rewritten)",
        "problems": "only warnings and errors",
        "summary": "warnings and errors, and one info for the run; `render --results` overrides the option "
        "and prints the infos it keeps on stderr (as `-v` does)",
    },
}
_STRING_FORMS = {
    "maxPerContainer": "name=quantity,name=quantity, or a JSON object",
    "maxPerRole": "role.name=quantity,role.name=quantity, or a JSON object",
    "allowedResources": "name,name, or a JSON array",
    "gpuResources": "name,name, or a JSON array",
    "derivedRuntimeMetadata": "a JSON object",
}


def json_schema() -> dict[str, Any]:
    """A TrainJobResources object: FunctionConfig's schema as its ``spec``, with the string forms
    ``_decode_policy_options`` reads besides the structured ones (a ConfigMap's values are strings;
    the typed object takes them too)."""
    from ..trainer.models import JSON_SCHEMA_DRAFT, QUANTITY_PATTERN
    from ..trainer.models import json_schema as model_schema

    spec = model_schema(FunctionConfig)
    spec.pop("$schema")
    options = spec["properties"]
    unsigned = "^\\+?" + QUANTITY_PATTERN.removeprefix("^(\\+|-)?")  # a maximum is not negative
    maximum = {"anyOf": [{"type": "number", "minimum": 0}, {"type": "string", "pattern": unsigned}]}
    caps = {"type": "object", "additionalProperties": maximum}
    options["maxPerContainer"] = caps
    options["maxPerRole"] = {
        "type": "object",
        "properties": {role: caps for role in ROLES},
        "additionalProperties": False,
    }
    for option in (*_STRING_FORMS, *_BOOLEAN_OPTIONS):
        entry = dict(options[option])
        default = {"default": entry.pop("default")} if "default" in entry else {}
        structured = entry.pop("anyOf", [entry])
        text = (
            {"type": "string", "description": _STRING_FORMS[option]}
            if option in _STRING_FORMS
            else {"type": "string", "enum": ["true", "false"]}
        )
        options[option] = {"anyOf": [*structured, text], **default}
    for option, described in _DESCRIPTIONS.items():
        options[option]["description"] = described
    return {
        "$schema": JSON_SCHEMA_DRAFT,
        "description": "The functionConfig of trainjob-resources (the same options as a v1 ConfigMap's data).",
        "type": "object",
        "required": ["apiVersion", "kind"],
        "properties": {
            "apiVersion": {"type": "string", "enum": [CONFIG_API_VERSION]},
            "kind": {"type": "string", "enum": [CONFIG_KIND]},
            "metadata": {"type": "object"},
            "spec": spec,
        },
    }


def to_object(config: FunctionConfig) -> dict[str, Any]:
    """The config as a TrainJobResources object with the options some layer set, and no other: a default
    is not written back as if set (``check`` follows the cluster's Trainer where trainerVersion is unset)."""
    spec = config.model_dump(by_alias=True, mode="json", exclude_unset=True)
    if spec.get("allowedResources") is None:
        spec.pop("allowedResources", None)
    return {
        "apiVersion": CONFIG_API_VERSION,
        "kind": CONFIG_KIND,
        "metadata": {"name": "trainjob-resources"},
        "spec": spec,
    }
