"""Whose option stands: the platform's options (``--config``) and the tenant's (a config in the
repository, the Argo CD Application's plugin env) as layers, combined into one functionConfig (``config``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ..kube.quantity import parse_quantity
from ..trainer.api import CLUSTER_RUNTIME_KIND
from ..trainer.releases import release
from ..values.keys import is_platform_key
from .config import _BOOLEAN_OPTIONS, _METADATA, ConfigError, FunctionConfig, parse_config
from .options import CONFIG_KIND

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
# Why each platform option is the platform's, for the message that refuses a tenant's value.
_PLATFORM_WHY = {
    "mode": "it decides whether derived runtimes are written, and native suits only a Trainer whose ContainerPatch "
    "has resources",
    "derivedRuntimeKind": "it decides the kind of the derived runtimes: ClusterTrainingRuntimes share one "
    "cluster-wide name space",
    "trainerVersion": "the Trainer the cluster runs decides how the pods' resources are computed, so what the caps see",
}
# What a tenant's value other than the platform's does, for each option a tenant may set (docs/hardening.md's
# trust model table is written from these and _PLATFORM_WHY: tests/options_doc.py).
TENANT_VALUE: dict[str, str] = {
    "trainerResources": "`moveToResourcesPerNode` over the platform's `error` is an error",
    "namespacePolicy": "looser than the platform's (`error` > `warning` > `off`) is an error",
    "maxPerContainer": "a cap above the platform's is an error; a lower cap, or one on another resource, joins the "
    "platform's",
    "maxPerRole": "the same, role by role",
    "allowedResources": "a name outside the platform's list is an error",
    "allowGpuInSidecars": "`true` over the platform's `false` is an error",
    "gpuResources": "leaving out a name of the platform's is an error; more names join",
    _METADATA: "a platform key given another value is an error; other keys join the platform's",
    "results": "(what is reported, not what is written)",
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
    if platform is not None:  # without the platform's config, every layer is the user's (the trust model)
        problems += _tenant_metadata(layers, platform, values.get("derived_runtime_kind", base.derived_runtime_kind))
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
