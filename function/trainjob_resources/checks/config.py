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
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError
from pydantic.alias_generators import to_camel

from ..kube.quantity import QuantityError, invalid, parse_quantity
from ..kube.resource_rules import qualified_name_errors
from ..trainer.api import CLUSTER_RUNTIME_KIND
from ..trainer.releases import NEWEST, TrainerVersion, release
from ..values import fieldpath
from ..values.keys import INTERNAL_PREFIX, ORCHESTRATOR_PREFIXES, PREFIX, SYNC_WAVE, is_platform_key
from ..values.violations import Violation
from .options import CONFIG_API_VERSION, CONFIG_KIND, DEFAULT_GPU_RESOURCES, ROLES

_MAP_OPTIONS = ("maxPerContainer",)
_METADATA = "derivedRuntimeMetadata"
_LIST_OPTIONS = ("allowedResources", "gpuResources")
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


# Layers: the platform's options (``--config``) and the tenant's (a config in the repository, the
# Argo CD Application's plugin env). Who may set which option (docs/hardening.md, "Trust model"):
# - PLATFORM_OPTIONS decide how effective resources are computed or which objects are written: the
#   platform's value (or the default, where it sets none) stands; a tenant's other value is an error.
# - POLICY_OPTIONS: a tenant's value only at least as strict as the platform's (a floor).
# - TENANT_OPTIONS change only what is reported.
# Without a platform layer (no ``--config``) the one config is the user's: every option is theirs.

ENV_PREFIX = "ARGOCD_ENV_"
PLATFORM_OPTIONS = ("mode", "derivedRuntimeKind", "trainerVersion")
POLICY_OPTIONS = (
    "maxPerContainer",
    "maxPerRole",
    "allowedResources",
    "allowGpuInSidecars",
    "namespacePolicy",
    "gpuResources",
    "trainerResources",
    _METADATA,
)
TENANT_OPTIONS = ("results",)
_BOOLEAN_OPTIONS = ("allowGpuInSidecars",)
# Why each platform option is the platform's, for the message that refuses a tenant's value.
_PLATFORM_WHY = {
    "mode": "it decides whether derived runtimes are written, and native suits only a Trainer whose ContainerPatch "
    "has resources",
    "derivedRuntimeKind": "it decides the kind of the derived runtimes: ClusterTrainingRuntimes share one "
    "cluster-wide name space",
    "trainerVersion": "the Trainer the cluster runs decides how the pods' resources are computed, so what the caps see",
}
_STRICTNESS = {"off": 0, "warning": 1, "error": 2}
_TRAINER_RESOURCES_STRICTNESS = {"moveToResourcesPerNode": 0, "error": 1}


class LayerError(ValueError):
    """Options that cannot be used; one message per problem, each naming where the option was set."""

    def __init__(self, messages: list[str]) -> None:
        super().__init__("; ".join(messages))
        self.messages = messages


class Layer:
    """Options from one source: the parsed config, the options it sets, and how messages name each."""

    def __init__(
        self, config: FunctionConfig, sources: dict[str, str], platform: bool = False, label: str = ""
    ) -> None:
        self.config = config
        self.sources = sources  # option (camelCase) -> where it was set, for messages
        self.platform = platform
        self.label = label or next(iter(sources.values()), "--config")  # where the layer was read


def env_name(option: str) -> str:
    """``derivedRuntimeKind`` -> ``ARGOCD_ENV_DERIVED_RUNTIME_KIND``."""
    return ENV_PREFIX + re.sub(r"(?<!^)([A-Z])", r"_\1", option).upper()


def _options() -> list[str]:
    return [f.alias or name for name, f in FunctionConfig.model_fields.items()]


def layer_from_object(value: dict[str, Any], label: str, platform: bool = False) -> Layer:
    """The options of a functionConfig object (a file's ConfigMap or TrainJobResources)."""
    try:
        config = parse_config(value)
    except ConfigError as err:
        kind = value.get("kind") if isinstance(value, dict) else None
        name = (value.get("metadata") or {}).get("name") if isinstance(value, dict) else None
        who = f"{kind} {name}: " if kind and isinstance(name, str) else ""
        raise LayerError([f"{label}: {who}{v.path}: functionConfig: {v.message}" for v in err.violations]) from None
    section = value.get("spec" if value.get("kind") == CONFIG_KIND else "data") or {}
    return Layer(config, {key: label for key in section if isinstance(key, str)}, platform, label)


def layer_from_env(environ: Mapping[str, str]) -> Layer | None:
    """The options set by ``ARGOCD_ENV_<OPTION>`` variables (empty ones ignored); None if none is set.
    Messages name the variable, as the Application's ``plugin.env`` entry is what the user wrote."""
    accepted = {env_name(option): option for option in _options()}
    options: dict[str, str] = {}
    problems: list[str] = []
    unknown: list[str] = []
    for key in sorted(environ):
        if not key.startswith(ENV_PREFIX) or environ[key] == "":
            continue
        option = accepted.get(key)
        if option is None:
            unknown.append(key)
        elif option in _BOOLEAN_OPTIONS and environ[key] not in ("true", "false"):
            problems.append(f"{_variable(key)}: must be true or false, got {environ[key]!r}")
        else:
            options[option] = environ[key]
    if unknown:
        problems.insert(
            0,
            f"unknown option{'s' if len(unknown) > 1 else ''} {', '.join(unknown)} in the environment; "
            f"accepted: {', '.join(sorted(accepted))}",
        )
    for option, value in options.items():
        try:
            parse_config({"apiVersion": "v1", "kind": "ConfigMap", "data": {option: value}})
        except ConfigError as err:
            for v in err.violations:
                rest = v.path.removeprefix(f"data.{option}").lstrip(".")
                detail = f"{rest}: " if rest else ""
                problems.append(f"{_variable(env_name(option))}: {detail}{v.message}, got {value!r}")
    if problems:
        raise LayerError(problems)
    if not options:
        return None
    config = parse_config({"apiVersion": "v1", "kind": "ConfigMap", "data": options})
    return Layer(config, {option: _variable(env_name(option)) for option in options})


def _variable(name: str) -> str:
    """How messages name an Argo CD option: the variable, and the Application's plugin env entry."""
    return f"{name} (plugin env {name.removeprefix(ENV_PREFIX)})"


def combine(layers: list[Layer]) -> FunctionConfig:
    """The options of all layers, a later layer overriding an earlier. With a platform layer, a tenant's
    platform option other than the platform's (or the default, where the platform sets none), or a
    policy option looser than the platform's, is an error (LayerError names both values and where each
    was set)."""
    platform = next((layer for layer in layers if layer.platform), None)
    problems: list[str] = []
    values: dict[str, Any] = {}
    for layer in layers:
        for option in layer.sources:
            name = _field_name(option)
            if name is None:
                continue
            value = getattr(layer.config, name)
            if platform is not None and not layer.platform and option in PLATFORM_OPTIONS:
                fixed = getattr(platform.config, name)
                if not _same(option, value, fixed):
                    problems.append(_not_the_platforms(layer, platform, option, value, fixed))
                continue
            if platform is not None and not layer.platform and option in POLICY_OPTIONS:
                floor = getattr(platform.config, name)
                looser = _looser(option, value, floor)
                if looser is not None:
                    problems.append(
                        f"{layer.sources[option]}: {option} {looser} would loosen the platform's policy "
                        f"({option} {_show(floor)} {_platform_source(platform, option)}); "
                        "the repository and ARGOCD_ENV_* may only tighten it"
                    )
                    continue
                if option == "maxPerContainer":
                    value = {**floor, **value}
                if option == "maxPerRole":
                    value = {role: {**floor.get(role, {}), **value.get(role, {})} for role in (*floor, *value)}
                elif option == _METADATA:  # the tenant's keys added to the platform's
                    value = {s: {**floor.get(s, {}), **value.get(s, {})} for s in sorted({*floor, *value})}
            values[name] = value
    base = platform.config if platform is not None else FunctionConfig.model_construct()
    kind = values.get("derived_runtime_kind", base.derived_runtime_kind)
    problems += _tenant_metadata(layers, platform, kind) if platform is not None else []  # else all is the user's
    if problems:
        raise LayerError(problems)
    return base.model_copy(update=values)


def _tenant_metadata(layers: list[Layer], platform: Layer | None, kind: str) -> list[str]:
    """What a tenant's layer may not add with ``derivedRuntimeMetadata``: a key in a key space only
    the platform may set (``values/keys.is_platform_key``: who owns the object, how Argo CD, Helm
    or kpt treat it, kustomize's and Trainer's own), and on a cluster-scoped derived runtime (one
    object, written alike by every team's render) any key; a key the platform sets to the same
    value is the platform's."""
    floor = platform.config.derived_runtime_metadata if platform is not None else {}
    problems: list[str] = []
    for layer in layers:
        if layer.platform or _METADATA not in layer.sources:
            continue
        metadata = layer.config.derived_runtime_metadata
        for section in sorted(metadata):
            for key in sorted(metadata[section]):
                if floor.get(section, {}).get(key) == metadata[section][key]:
                    continue
                where = f"{layer.sources[_METADATA]}: {_METADATA}.{section}: {key!r}"
                if kind == CLUSTER_RUNTIME_KIND:
                    problems.append(
                        f"{where}: derivedRuntimeKind is ClusterTrainingRuntime, one object for every team that "
                        "derives it, so it takes no metadata but the platform's: ask the platform to set it "
                        "in its config (render --config), or derive TrainingRuntimes"
                    )
                elif is_platform_key(key):
                    problems.append(
                        f"{where}: a key only the platform may set on a derived runtime (Argo CD, Helm, kpt and "
                        "cli-utils, kustomize and config.kubernetes.io, app.kubernetes.io/instance, "
                        "trainer.kubeflow.org and the function's own keys decide who owns it and how it is "
                        "synced, pruned or deleted): ask the platform to set it in its config (render --config), "
                        "or use a key of your own"
                    )
    return problems


def _platform_label(platform: Layer) -> str:
    return next(iter(platform.sources.values()), "--config")


def _same(option: str, value: Any, fixed: Any) -> bool:
    """Whether a tenant's value of a platform option is the platform's (``v2.3`` is ``v2.3.0``)."""
    if option == "trainerVersion":
        return bool(release(value) == release(fixed))
    return bool(value == fixed)


def _not_the_platforms(layer: Layer, platform: Layer, option: str, value: Any, fixed: Any) -> str:
    """A tenant's value of a platform option, refused: both values, where each was set, and why."""
    where = layer.sources[option]
    if option in platform.sources:
        theirs = f"the platform pins it to {_show(fixed)} ({platform.sources[option]})"
    else:
        theirs = f"the platform's config ({platform.label}) does not set it, so it is {_show(fixed)}, the default"
    return (
        f"{where}: {option} {_show(value)}: {theirs}; the repository and ARGOCD_ENV_* may not change it "
        f"({_PLATFORM_WHY[option]}). Remove it, or ask the platform to set {option} in its config"
    )


def _platform_source(platform: Layer, option: str) -> str:
    if option in platform.sources:
        return f"in {platform.sources[option]}"
    return f"by default: {platform.label} does not set it"


def _field_name(option: str) -> str | None:
    for name, info in FunctionConfig.model_fields.items():
        if (info.alias or name) == option:
            return name
    return None


def _show(value: Any) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_show(v)}" for k, v in value.items()) + "}" if value else "{} (no caps)"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(value) + "]"
    if value is None:
        return "(any resource)"
    return str(value).lower() if isinstance(value, bool) else str(value)


def _looser(option: str, value: Any, floor: Any) -> str | None:
    """How ``value`` is looser than the platform's ``floor`` (shown in the message), or None."""
    if option == "maxPerContainer":
        raised = [
            f"{name}: {quantity}"
            for name, quantity in value.items()
            if name in floor and parse_quantity(quantity) > parse_quantity(floor[name])
        ]
        return "{" + ", ".join(raised) + "}" if raised else None
    if option == "maxPerRole":
        loosened = [
            f"{role}: {over}"
            for role, maxima in value.items()
            if (over := _looser("maxPerContainer", maxima, floor.get(role, {}))) is not None
        ]
        return "{" + ", ".join(loosened) + "}" if loosened else None
    if option == "allowedResources":
        if floor is None:
            return None
        extra = sorted(set(value or ()) - set(floor)) if value is not None else None
        if value is None:
            return "(any resource)"
        return "[" + ", ".join(extra) + "]" if extra else None
    if option == "gpuResources":
        missing = sorted(set(floor) - set(value))
        return f"without {', '.join(missing)}" if missing else None
    if option == "allowGpuInSidecars":
        return "true" if value and not floor else None
    if option == "namespacePolicy":
        return value if _STRICTNESS[value] < _STRICTNESS[floor] else None
    if option == "trainerResources":
        return value if _TRAINER_RESOURCES_STRICTNESS[value] < _TRAINER_RESOURCES_STRICTNESS[floor] else None
    if option == _METADATA:  # a platform key given another value
        changed = [
            f"{section}: {{{key}: {value[section][key]}}}"
            for section in sorted(floor)
            for key in sorted(floor[section])
            if key in value.get(section, {}) and value[section][key] != floor[section][key]
        ]
        return "{" + ", ".join(changed) + "}" if changed else None
    return None


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
