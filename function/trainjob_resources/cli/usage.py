"""The top-level help (``main.USAGE``), generated from what declares each of its parts: every
command's options from its argparse parser, their formats from ``cli/formats.py``, every
functionConfig option with its description and choices from ``options/config.py`` (``FunctionConfig``),
the roles from ``options/options.py`` (``ROLES``, named in ``maxPerRole``'s description).

``main.py`` holds the generated text, so that start-up builds no parser; tests/test_usage.py fails
when it drifts from ``usage()`` and rewrites it under ``--update-goldens`` (tests/kit/golden.py).
"""

from __future__ import annotations

import argparse
import json
import textwrap
import typing
from typing import Any, Final

WIDTH: Final = 110  # characters of a synopsis line
COMMENT_COLUMN: Final = 36  # where a functionConfig option's comment starts

KRM_LINE = "trainjob-resources                     KRM function: ResourceList on stdin, ResourceList on stdout"
SCHEMA_NOTE = "JSON Schema for editors and kubeconform"

ABOUT = """\
Lets a Kubeflow Trainer TrainJob write container `resources` in any spec.runtimePatches[]
ContainerPatch (the Trainer API has no such field) and materializes them into derived runtimes
the API accepts: each TrainJob then points at a runtime sized as its patches ask.

As a KRM function (kustomize transformer, kpt pipeline or `kpt fn eval`) it reads a ResourceList,
YAML or JSON, and writes it back with items rewritten and results; exit 1 when a result is an error.
`render` does the same for files, folders (kustomizations built first) or - (stdin) and prints the
manifests (Argo CD plugins, CI); `explain` prints what every TrainJob's pods request and limit;
`check` reads the live cluster and says what a sync of the render would be refused or break.
"""

EXAMPLES = """\
Examples:
  kustomize build --enable-alpha-plugins --enable-exec overlays/prod   # listed under transformers:
  kpt fn eval --exec trainjob-resources .
  trainjob-resources render overlays/prod --config trainjob-resources.yaml > rendered.yaml
  trainjob-resources explain overlays/prod --format markdown
  trainjob-resources check overlays/prod --as system:serviceaccount:argocd:argocd-application-controller
"""

# A value to show for each functionConfig option whose default shows nothing (tests/test_usage.py
# checks that the function accepts them all).
OPTION_EXAMPLES: Final[dict[str, Any]] = {
    "maxPerContainer": {"memory": "128Gi"},
    "maxPerRole": {"sidecar": {"memory": "64Gi"}},
    "allowedResources": ["cpu", "memory", "nvidia.com/gpu"],
    "derivedRuntimeMetadata": {"annotations": {"argocd.argoproj.io/sync-options": "Prune=false"}},
}


def usage(docs_url: str) -> str:
    from .check import _parser as check_parser
    from .explain import _parser as explain_parser
    from .render import _parser as render_parser
    from .schema import KINDS

    prefix = "       trainjob-resources "
    lines = [f"usage: {KRM_LINE}"]
    for name, parser in (("render", render_parser), ("explain", explain_parser), ("check", check_parser)):
        lines += synopsis(prefix + name, parser())
    lines.append(f"{prefix}schema {'|'.join(KINDS)}   {SCHEMA_NOTE}")
    lines.append(f"{prefix}--help | --version")
    lines.append(
        "       (`render --help`, `explain --help`, `check --help` and `schema --help` describe their options in full;"
    )
    lines.append("       as a kubectl plugin: `kubectl trainjob-resources check ...`)")
    return "\n".join(
        [*lines, "", ABOUT, *function_config(), "", EXAMPLES, f"Docs: {docs_url} (README.md and docs/)", ""]
    )


def synopsis(head: str, parser: argparse.ArgumentParser) -> list[str]:
    """``head`` and every option of ``parser``, wrapped at WIDTH under the first option."""
    words = [_word(action) for action in parser._actions if not isinstance(action, argparse._HelpAction)]
    lines = [head]
    for word in words:
        if len(lines[-1]) + 1 + len(word) > WIDTH:
            lines.append(" " * len(head))
        lines[-1] += " " + word
    return lines


def _word(action: argparse.Action) -> str:
    if not action.option_strings:
        return f"[{action.metavar} ...]" if action.nargs == "*" else str(action.metavar)
    option = max(action.option_strings, key=len)
    if action.nargs == 0:
        return f"[{option}]"
    value = "|".join(action.choices) if action.choices is not None else str(action.metavar)
    return f"[{option} {value}]"


def function_config() -> list[str]:
    """The functionConfig's forms and every option of FunctionConfig, in its order."""
    from ..options.config import _DESCRIPTIONS, FunctionConfig
    from ..options.options import CONFIG_API_VERSION, CONFIG_KIND

    lines = [
        "functionConfig: none, a v1 ConfigMap (the options under `data`, as strings), or",
        f"  apiVersion: {CONFIG_API_VERSION}",
        f"  kind: {CONFIG_KIND}",
        "  metadata: {name: trainjob-resources}",
        "  spec:",
    ]
    for name, field in FunctionConfig.model_fields.items():
        option = field.alias or name
        choices = _choices(field.annotation, field.default)
        value = OPTION_EXAMPLES.get(option, field.default)
        entry = f"    {option}: {_flow(value)}"
        description = _DESCRIPTIONS[option]
        named = choices and all(choice.split(" ")[0] in description for choice in choices.split(" | "))
        comment = f"{choices}; {description}" if choices and not named else description
        if value == field.default and not choices:
            comment = f"default; {comment}"
        lines += _commented(entry, comment)
    return lines


def _commented(entry: str, comment: str) -> list[str]:
    """``entry``, then ``comment`` from COMMENT_COLUMN, wrapped at WIDTH (each line a comment)."""
    start = max(COMMENT_COLUMN, len(entry) + 1)
    first, *rest = textwrap.wrap(comment, WIDTH - start - 2) or [""]
    lines = [f"{entry.ljust(start - 1)} # {first}"]
    return lines + [
        f"{'':{COMMENT_COLUMN - 1}} # {line}" for line in textwrap.wrap(" ".join(rest), WIDTH - COMMENT_COLUMN - 2)
    ]


def _choices(annotation: Any, default: Any) -> str:
    """``a (default) | b`` for an option of a few values, else empty."""
    values = [True, False] if annotation is bool else list(typing.get_args(annotation))
    if not values or not all(isinstance(v, str | bool) for v in values):
        return ""
    return " | ".join(f"{_flow(v)} (default)" if v == default else _flow(v) for v in values)


def _flow(value: Any) -> str:
    """``value`` in YAML's flow style, as one writes it in a spec: no quotes where none are needed."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_flow(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_flow(v) for v in value) + "]"
    return json.dumps(value)
